package apply

import (
	"context"
	"sync"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/clock"
)

// LeaseFence is the leader election lock with a memory of the last time it
// was surely held: it records when each successful acquisition or renewal
// of this manager started. Another manager may take the lease over only once
// it has seen it unrenewed for the lease duration, so writes made before
// that start plus Valid (the renew deadline, shorter than the lease
// duration) cannot interleave with a new leader's. A leader frozen past its
// lease (SIGSTOP, a long GC pause, a VM migration) finds its fence closed
// when it runs again, before its elector notices it lost.
type LeaseFence struct {
	resourcelock.Interface
	Clock clock.PassiveClock
	Valid time.Duration

	mu        sync.Mutex
	renewedAt time.Time
}

// NewLeaseFence wraps a lock.
func NewLeaseFence(lock resourcelock.Interface, clk clock.PassiveClock, valid time.Duration) *LeaseFence {
	return &LeaseFence{Interface: lock, Clock: clk, Valid: valid}
}

// Create acquires the lease; a success opens the fence.
func (f *LeaseFence) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	start := f.Clock.Now()
	err := f.Interface.Create(ctx, ler)
	f.observe(ler, start, err)
	return err
}

// Update renews (or releases) the lease; a renewal keeps the fence open.
func (f *LeaseFence) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	start := f.Clock.Now()
	err := f.Interface.Update(ctx, ler)
	f.observe(ler, start, err)
	return err
}

func (f *LeaseFence) observe(ler resourcelock.LeaderElectionRecord, start time.Time, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case err != nil:
	case ler.HolderIdentity == f.Identity():
		f.renewedAt = start
	default:
		// Released: nothing more may be written.
		f.renewedAt = time.Time{}
	}
}

// WritableUntil is the end of the window in which this manager surely holds
// the lease, and whether that is still ahead.
func (f *LeaseFence) WritableUntil() (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.renewedAt.IsZero() {
		return time.Time{}, false
	}
	until := f.renewedAt.Add(f.Valid)
	return until, f.Clock.Now().Before(until)
}
