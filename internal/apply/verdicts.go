package apply

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/patch"
	"github.com/sluicehq/sluice/internal/scheduler"
	"github.com/sluicehq/sluice/internal/workload"
)

// Verdicts writes why workloads wait (QuotaReserved=False, its reason and
// message) as background writes. A workload that waits for room (quota
// to be freed, or preempted workloads to stop) gets one when it is among
// the first Heads of its ClusterQueue in a cycle's order: the others wait
// behind them (as in Kueue, a workload's condition is written as it comes
// to the head, and a backlog of thousands costs no writes), unless it still
// shows a reason that no longer holds. A workload that
// waits for another reason (it can never fit, no flavor matches, its queue
// is missing or stopped) is told whatever its place. A workload admitted within Grace of
// entering its queue never gets one (most are, and the write would cost as
// much as the admission); after that, its first verdict and new numbers
// under the same reason are written at most once per Refresh per workload
// and PerSecond in all, so that a backlog of thousands of waiting workloads
// costs a trickle of writes instead of one per admission or release in
// their cohort. A verdict whose reason changes is written at once.
type Verdicts struct {
	Workloads *Workloads
	// Heads is how many waiting workloads of each ClusterQueue get a
	// verdict; 0 means all.
	Heads   int
	Grace   time.Duration
	Refresh time.Duration
	// PerSecond bounds first verdicts and refreshes in all; 0 means no
	// bound.
	PerSecond float64

	once   sync.Once
	budget *rate.Limiter

	mu sync.Mutex
	// queued are the verdicts handed to the dispatcher, by workload: the
	// same verdict is not sent twice, and a new message of the same reason
	// waits for Refresh.
	queued map[string]queuedVerdict
	// refreshDue are parked workloads whose verdict waits, and until when;
	// one timer requeues them.
	refreshDue map[string]time.Time
	// slots are the budget's slots booked by workloads waiting for them.
	slots map[string]time.Time
	// refreshArmed is when the timer fires next (zero: not armed).
	refreshArmed time.Time
	timerMu      sync.Mutex
	timer        clock.Timer
}

// WaitsForRoom tells the reasons of a workload that waits for quota to come
// free (behind the head of its queue, that is all there is to say).
func WaitsForRoom(reason string) bool {
	return reason == kueue.ReasonWaitingForQuota || reason == kueue.ReasonWaitingForPreemptedWorkloads
}

type queuedVerdict struct {
	reason, message string
	at              time.Time
	// landed: written. It no longer stands for a write on its way, only
	// for when it was sent: were the condition replaced since, the same
	// verdict is written again.
	landed bool
}

// is tells whether this is d's verdict (its reason and message).
func (q queuedVerdict) is(d scheduler.Decision) bool {
	return q.reason == d.Reason && q.message == d.Message
}

// reconsiderAfter is how soon a workload whose verdict was not written
// (an admission of it was in flight, or an urgent write of it made the
// verdict moot) is evaluated again. Nothing else may requeue it: the
// urgent write may change nothing, and a parked workload waits for events.
const reconsiderAfter = time.Second

type pendingWriteVerdict int

const (
	noWrite pendingWriteVerdict = iota
	writeNow
	writeLater
)

func (v *Verdicts) init() {
	v.once.Do(func() {
		v.mu.Lock()
		defer v.mu.Unlock()
		if v.queued == nil {
			v.queued = map[string]queuedVerdict{}
		}
		if v.PerSecond > 0 && v.budget == nil {
			v.budget = rate.NewLimiter(rate.Limit(v.PerSecond), max(1, int(v.PerSecond)))
		}
	})
}

// Offer queues the write of a pending decision's verdict when it is due,
// or arranges for it to be evaluated again when its refresh is. rank is the
// decision's place among the cycle's workloads of its ClusterQueue that
// wait for room (0 for the first).
func (v *Verdicts) Offer(d scheduler.Decision, rank int) {
	if v.behindHeads(d, rank) {
		return
	}
	v.init()
	switch v.due(d) {
	case writeNow:
		v.remember(d)
		v.Workloads.Dispatcher.Add(Write{Object: workloadObject(d.Info.Key), Kind: writePending, Class: Background,
			Run:     func(ctx context.Context) Outcome { return v.write(ctx, d) },
			Dropped: func() { v.reconsider(d) }})
	case writeLater:
		v.refreshLater(d.Info.Key, v.wait(d))
	}
}

// behindHeads tells a decision to wait for room that is not among the
// Heads of its ClusterQueue, and so gets no verdict, unless the workload
// still shows another reason (its queue was inactive, say, and is no
// longer): that one would be wrong from now on, so it is replaced.
func (v *Verdicts) behindHeads(d scheduler.Decision, rank int) bool {
	if v.Heads == 0 || d.ClusterQueue == "" || !WaitsForRoom(d.Reason) || rank < v.Heads {
		return false
	}
	v.mu.Lock()
	last, queued := v.queued[d.Info.Key]
	v.mu.Unlock()
	if queued && !WaitsForRoom(last.reason) {
		return false
	}
	c := meta.FindStatusCondition(v.Workloads.Tracker.written.conditions(d.Info), kueue.WorkloadQuotaReserved)
	return c == nil || c.Status != metav1.ConditionFalse || WaitsForRoom(c.Reason)
}

// due decides whether a pending verdict is written: never when the
// condition already says it or the same verdict is on its way; not within
// Grace of the workload entering its queue; at once for a reason that
// replaces another; a first verdict, or a message whose numbers changed, at
// most once per Refresh per workload and PerSecond in all.
func (v *Verdicts) due(d scheduler.Decision) pendingWriteVerdict {
	conditions := v.Workloads.Tracker.written.conditions(d.Info)
	if !workload.PendingDiffers(conditions, d.Reason, d.Message) {
		return noWrite
	}
	v.mu.Lock()
	last, queued := v.queued[d.Info.Key]
	v.mu.Unlock()
	if queued && last.is(d) {
		if !last.landed {
			return noWrite // on its way
		}
		// It landed, and the condition says something else now (an
		// eviction's message written over it, say): judged afresh.
		queued = false
	}
	sameReason, first := queued && last.reason == d.Reason, false
	if !queued {
		c := meta.FindStatusCondition(conditions, kueue.WorkloadQuotaReserved)
		first = c == nil || c.Status != metav1.ConditionFalse
		sameReason = !first && c.Reason == d.Reason
	}
	switch {
	case first && v.Workloads.Clock.Since(d.Info.QueueTime) < v.Grace:
		return writeLater
	case !sameReason && !first:
		return writeNow
	case sameReason && queued && v.Workloads.Clock.Since(last.at) < v.Refresh:
		return writeLater
	case v.budget != nil && !v.takeSlot(d.Info.Key):
		return writeLater
	}
	return writeNow
}

// takeSlot spends a slot of the budget on a workload's verdict: now if one
// is free, otherwise it books the next free one within a refresh and the
// workload waits for it (wait says how long), so that a backlog is written
// at the budget's pace rather than by whoever comes first at each refresh.
func (v *Verdicts) takeSlot(key string) bool {
	now := v.Workloads.Clock.Now()
	v.mu.Lock()
	defer v.mu.Unlock()
	if at, booked := v.slots[key]; booked {
		if now.Before(at) {
			return false
		}
		delete(v.slots, key)
		return true
	}
	r := v.budget.ReserveN(now, 1)
	if !r.OK() {
		return false
	}
	delay := r.DelayFrom(now)
	if delay > v.Refresh {
		// No slot within a refresh: book none (a backlog booked far ahead
		// would hold back the verdicts of workloads that come later) and
		// try again at the refresh.
		r.CancelAt(now)
		return false
	}
	if delay > 0 {
		if v.slots == nil {
			v.slots = map[string]time.Time{}
		}
		v.slots[key] = now.Add(delay)
		return false
	}
	return true
}

// wait is how long a verdict due later waits: what is left of the
// workload's grace, until its booked slot of the budget, or the refresh
// interval.
func (v *Verdicts) wait(d scheduler.Decision) time.Duration {
	if left := v.Grace - v.Workloads.Clock.Since(d.Info.QueueTime); left > 0 {
		return left
	}
	v.mu.Lock()
	at, booked := v.slots[d.Info.Key]
	v.mu.Unlock()
	if left := at.Sub(v.Workloads.Clock.Now()); booked && left > 0 {
		return left
	}
	return v.Refresh
}

func (v *Verdicts) remember(d scheduler.Decision) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.queued[d.Info.Key] = queuedVerdict{reason: d.Reason, message: d.Message, at: v.Workloads.Clock.Now()}
}

// landed records that d's verdict was written, if it is still the one
// sent for its workload.
func (v *Verdicts) landed(d scheduler.Decision) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if last, ok := v.queued[d.Info.Key]; ok && last.is(d) {
		last.landed = true
		v.queued[d.Info.Key] = last
	}
}

// reconsider forgets d's verdict, which was not written (not sent either,
// or the same verdict decided again would never be), and has its workload
// evaluated again soon.
func (v *Verdicts) reconsider(d scheduler.Decision) {
	v.forgetIfStill(d)
	v.refreshLater(d.Info.Key, reconsiderAfter)
}

// forgetIfStill forgets the verdict sent for d's workload if it is still
// d's (not a newer one queued since).
func (v *Verdicts) forgetIfStill(d scheduler.Decision) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if last, ok := v.queued[d.Info.Key]; ok && last.is(d) {
		delete(v.queued, d.Info.Key)
	}
}

// Forget drops the verdict sent for a workload (and a slot it booked): it
// was admitted, or the write failed and the verdict must be sent again.
func (v *Verdicts) Forget(key string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.queued, key)
	delete(v.slots, key)
}

// Trim bounds the memory of verdicts sent: past a multiple of the pending
// workloads it starts over (a verdict may then be written once more).
func (v *Verdicts) Trim(pending int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.queued) > 2*pending+1024 {
		v.queued = map[string]queuedVerdict{}
	}
	if len(v.slots) > 2*pending+1024 {
		v.slots = map[string]time.Time{}
	}
}

// refreshLater requeues a parked workload after a while (its refresh
// interval, or what is left of its grace), so that its verdict is written
// even if nothing else happens. One timer serves them all, armed for the
// earliest.
func (v *Verdicts) refreshLater(key string, after time.Duration) {
	now := v.Workloads.Clock.Now()
	due := now.Add(after)
	v.mu.Lock()
	if v.refreshDue == nil {
		v.refreshDue = map[string]time.Time{}
	}
	if old, ok := v.refreshDue[key]; !ok || due.Before(old) {
		v.refreshDue[key] = due
	}
	arm := v.refreshArmed.IsZero() || due.Before(v.refreshArmed)
	if arm {
		v.refreshArmed = due
	}
	v.mu.Unlock()
	if arm {
		v.arm(after)
	}
}

// arm sets the one timer to fire after d. It is called without mu held: a
// fake clock runs the timer's function as it steps.
func (v *Verdicts) arm(d time.Duration) {
	v.timerMu.Lock()
	defer v.timerMu.Unlock()
	if v.timer != nil {
		v.timer.Stop()
	}
	// A new timer each time, not Reset: a fake clock sends each firing of
	// a function timer on a channel of one that nothing reads, and blocks
	// on its second firing. In a goroutine of its own: a fake clock runs
	// the function while holding its lock, and refreshDueNow reads the
	// clock.
	v.timer = v.Workloads.Clock.AfterFunc(d, func() { go v.refreshDueNow() })
}

// refreshDueNow requeues the workloads whose refresh is due and arms the
// timer for the next.
func (v *Verdicts) refreshDueNow() {
	now := v.Workloads.Clock.Now()
	v.mu.Lock()
	ready := map[string]bool{}
	var next time.Time
	for key, due := range v.refreshDue {
		if !due.After(now) {
			ready[key] = true
			delete(v.refreshDue, key)
		} else if next.IsZero() || due.Before(next) {
			next = due
		}
	}
	v.refreshArmed = next
	v.mu.Unlock()
	if !next.IsZero() {
		v.arm(next.Sub(now))
	}
	if len(ready) > 0 {
		v.Workloads.Tracker.Queues.RequeueKeys(ready)
	}
}

// write records why a workload waits, on top of the newest version known
// here; nothing is written when that already says it or an admission of it
// was decided since. A conflict means a newer version exists, which is
// evaluated again; other failures are retried after the backoff.
func (v *Verdicts) write(ctx context.Context, d scheduler.Decision) Outcome {
	written := v.Workloads.Tracker.written
	if v.Workloads.Tracker.Phase(d.Info.Key) != "" {
		// An admission or eviction of it is on its way: the verdict is not
		// written, and is decided again.
		v.reconsider(d)
		countWrite(writePending, errSkipped)
		return Done
	}
	if !workload.PendingDiffers(written.conditions(d.Info), d.Reason, d.Message) {
		countWrite(writePending, errSkipped)
		return Done
	}
	base := written.latest(d.Info)
	wl := base.DeepCopy()
	workload.SetPending(wl, d.Reason, d.Message, v.Workloads.Clock.Now())
	err := v.Workloads.Client.Status().Patch(ctx, wl, patch.OnVersion(base))
	countWrite(writePending, err)
	switch {
	case err == nil:
		written.record(d.Info.Key, base.ResourceVersion, wl)
		v.landed(d)
		return Done
	case apierrors.IsNotFound(err):
		v.Forget(d.Info.Key)
		return Done
	case apierrors.IsConflict(err):
		// Evaluate it again later: a status change by someone else does
		// not requeue a parked workload by itself.
		v.Forget(d.Info.Key)
		v.refreshLater(d.Info.Key, v.Refresh)
		return Done
	}
	return Retry
}
