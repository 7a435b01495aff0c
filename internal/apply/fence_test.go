package apply

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
	clocktesting "k8s.io/utils/clock/testing"
)

// fakeLock is a lock whose writes succeed or fail as told.
type fakeLock struct {
	resourcelock.Interface
	fail error
}

func (l *fakeLock) Create(context.Context, resourcelock.LeaderElectionRecord) error { return l.fail }
func (l *fakeLock) Update(context.Context, resourcelock.LeaderElectionRecord) error { return l.fail }
func (l *fakeLock) Identity() string                                                { return "me" }

func TestLeaseFence(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	lock := &fakeLock{}
	f := NewLeaseFence(lock, clk, 10*time.Second)
	ctx := context.Background()
	mine := resourcelock.LeaderElectionRecord{HolderIdentity: "me"}
	if _, ok := f.WritableUntil(); ok {
		t.Fatal("writable before the lease was ever held")
	}
	if err := f.Create(ctx, mine); err != nil {
		t.Fatal(err)
	}
	until, ok := f.WritableUntil()
	if !ok || !until.Equal(time.Unix(1010, 0)) {
		t.Fatalf("after acquiring: until %v ok %v, want 10s from the acquisition's start", until, ok)
	}
	clk.Step(9 * time.Second)
	lock.fail = errors.New("the API server is slow")
	_ = f.Update(ctx, mine)
	clk.Step(2 * time.Second)
	if _, ok := f.WritableUntil(); ok {
		t.Fatal("still writable past the renew deadline after the renewals failed (a frozen leader would write)")
	}
	lock.fail = nil
	if err := f.Update(ctx, mine); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.WritableUntil(); !ok {
		t.Fatal("a renewal did not open the fence again")
	}
	if err := f.Update(ctx, resourcelock.LeaderElectionRecord{}); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.WritableUntil(); ok {
		t.Fatal("writable after releasing the lease")
	}
}
