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
// only a few are written at a time. Two writes of one workload never run at
// once: each is a conditional patch on the version the other one replaces,
// so the second would be refused. Adding never blocks the cycle.
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
	// writing are the workloads whose write is being made.
	writing map[string]bool
}

func newWriteQueue(maxPendingInFlight int) *writeQueue {
	q := &writeQueue{pending: map[string]scheduler.Decision{}, writing: map[string]bool{}, maxInFlight: max(1, maxPendingInFlight)}
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
// it is an admission; ok is false once the queue is closed and drained. A
// workload whose write is being made waits its turn, and the writes behind
// it go first. The caller reports the write done with written.
func (q *writeQueue) next() (d scheduler.Decision, admission, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		d, admission, found := q.take()
		if found {
			return d, admission, true
		}
		if q.closed && len(q.admissions) == 0 {
			return scheduler.Decision{}, false, false
		}
		q.cond.Wait()
	}
}

// take is next without waiting: found is false when no write can be made
// now. The caller holds mu.
func (q *writeQueue) take() (d scheduler.Decision, admission, found bool) {
	for i, a := range q.admissions {
		if q.writing[a.Info.Key] {
			continue
		}
		q.admissions = append(q.admissions[:i:i], q.admissions[i+1:]...)
		q.writing[a.Info.Key] = true
		return a, true, true
	}
	if q.closed {
		return scheduler.Decision{}, false, false
	}
	d, found = q.nextVerdict()
	return d, false, found
}

// nextVerdict takes the oldest queued verdict of a workload not being
// written, within the bound of verdicts in flight. The caller holds mu.
func (q *writeQueue) nextVerdict() (scheduler.Decision, bool) {
	for i := 0; i < len(q.pendingOrder) && q.inFlight < q.maxInFlight; {
		key := q.pendingOrder[i]
		d, queued := q.pending[key]
		switch {
		case !queued:
			q.pendingOrder = append(q.pendingOrder[:i:i], q.pendingOrder[i+1:]...)
		case q.writing[key]:
			i++
		default:
			q.pendingOrder = append(q.pendingOrder[:i:i], q.pendingOrder[i+1:]...)
			delete(q.pending, key)
			q.inFlight++
			q.writing[key] = true
			return d, true
		}
	}
	return scheduler.Decision{}, false
}

// written reports a write made: the workload may be written again, and a
// verdict frees its slot.
func (q *writeQueue) written(d scheduler.Decision, admission bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.writing, d.Info.Key)
	if !admission {
		q.inFlight--
	}
	q.cond.Broadcast()
}

// run makes writes with n writers until the queue is closed and drained.
func (q *writeQueue) run(ctx context.Context, n int, writeAdmission, writeVerdict func(context.Context, scheduler.Decision)) *sync.WaitGroup {
	var wg sync.WaitGroup
	for range max(1, n) {
		wg.Go(func() {
			for {
				d, admission, ok := q.next()
				switch {
				case !ok:
					return
				case admission:
					writeAdmission(ctx, d)
					q.written(d, true)
				default:
					writeVerdict(ctx, d)
					q.written(d, false)
				}
			}
		})
	}
	return &wg
}
