package controller

import (
	"context"
	"sync"

	"github.com/sluicehq/sluice/internal/scheduler"
)

// writeQueue orders the scheduler's status writes. Admissions go first, in
// the order decided, and never wait behind a pending verdict: on a busy API
// server the verdicts of thousands of waiting workloads would otherwise hold
// back the admissions that free the queue. Pending verdicts are keyed by
// workload: a newer verdict replaces a queued one, an admission drops it, and
// only a few are written at a time. Adding never blocks the cycle.
type writeQueue struct {
	mu   sync.Mutex
	cond *sync.Cond

	admissions []scheduler.Decision
	// pendingOrder lists workload keys in arrival order; pending holds the
	// latest verdict of each (a key whose verdict was dropped is skipped).
	pendingOrder []string
	pending      map[string]scheduler.Decision
	inFlight     int
	maxInFlight  int
	closed       bool
}

func newWriteQueue(maxPendingInFlight int) *writeQueue {
	q := &writeQueue{pending: map[string]scheduler.Decision{}, maxInFlight: max(1, maxPendingInFlight)}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// admit queues an admission and drops the workload's pending verdict.
func (q *writeQueue) admit(d scheduler.Decision) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.pending, d.Info.Key)
	q.admissions = append(q.admissions, d)
	q.cond.Signal()
}

// verdict queues a pending verdict, replacing one still queued.
func (q *writeQueue) verdict(d scheduler.Decision) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, queued := q.pending[d.Info.Key]; !queued {
		q.pendingOrder = append(q.pendingOrder, d.Info.Key)
	}
	q.pending[d.Info.Key] = d
	q.cond.Signal()
}

// close lets the writers finish the admissions queued and stop; pending
// verdicts not yet written are dropped (the next leader decides again).
func (q *writeQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.cond.Broadcast()
}

// next blocks until there is a write to make, and returns it with whether
// it is an admission; ok is false once the queue is closed and drained.
func (q *writeQueue) next() (d scheduler.Decision, admission, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		if len(q.admissions) > 0 {
			d = q.admissions[0]
			q.admissions[0] = scheduler.Decision{}
			q.admissions = q.admissions[1:]
			return d, true, true
		}
		if q.closed {
			return scheduler.Decision{}, false, false
		}
		for q.inFlight < q.maxInFlight && len(q.pendingOrder) > 0 {
			key := q.pendingOrder[0]
			q.pendingOrder = q.pendingOrder[1:]
			if d, queued := q.pending[key]; queued {
				delete(q.pending, key)
				q.inFlight++
				return d, false, true
			}
		}
		q.cond.Wait()
	}
}

// verdictWritten frees the slot of a pending verdict's write.
func (q *writeQueue) verdictWritten() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.inFlight--
	q.cond.Signal()
}

// run makes writes with n writers until the queue is closed and drained.
func (q *writeQueue) run(ctx context.Context, n int, writeAdmission, writeVerdict func(context.Context, scheduler.Decision)) *sync.WaitGroup {
	var wg sync.WaitGroup
	for range max(1, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				d, admission, ok := q.next()
				switch {
				case !ok:
					return
				case admission:
					writeAdmission(ctx, d)
				default:
					writeVerdict(ctx, d)
					q.verdictWritten()
				}
			}
		}()
	}
	return &wg
}
