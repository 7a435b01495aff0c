package apply

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/scheduler"
	"github.com/sluicehq/sluice/internal/workload"
)

// Verdicts writes why workloads wait (QuotaReserved=False, its reason and
// message) as background writes: a new reason at once, new numbers under
// the same reason at most once per Refresh per workload and PerSecond in
// all, so that a backlog of thousands of waiting workloads costs a trickle
// of writes instead of one per admission or release in their cohort.
type Verdicts struct {
	Workloads *Workloads
	Refresh   time.Duration
	// PerSecond bounds the refreshes in all; 0 means no bound.
	PerSecond float64

	once   sync.Once
	budget *rate.Limiter

	mu sync.Mutex
	// queued are the verdicts handed to the dispatcher, by workload: the
	// same verdict is not sent twice, and a new message of the same reason
	// waits for Refresh.
	queued map[string]queuedVerdict
	// refreshDue are parked workloads whose message waits for the refresh
	// interval; one timer requeues them.
	refreshDue   map[string]bool
	refreshArmed bool
}

type queuedVerdict struct {
	reason, message string
	at              time.Time
}

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
// or arranges for it to be evaluated again when its refresh is.
func (v *Verdicts) Offer(d scheduler.Decision) {
	v.init()
	switch v.due(d) {
	case writeNow:
		v.remember(d)
		v.Workloads.Dispatcher.Add(Write{Object: workloadObject(d.Info.Key), Kind: writePending, Class: Background,
			Run: func(ctx context.Context) Outcome { return v.write(ctx, d) }})
	case writeLater:
		v.refreshLater(d.Info.Key)
	}
}

// due decides whether a pending verdict is written: never when the
// condition already says it or the same verdict is on its way, at once for a
// new reason, and for a message whose numbers changed, at most once per
// Refresh per workload and PerSecond in all.
func (v *Verdicts) due(d scheduler.Decision) pendingWriteVerdict {
	conditions := v.Workloads.Tracker.written.conditions(d.Info)
	if !workload.PendingDiffers(conditions, d.Reason, d.Message) {
		return noWrite
	}
	v.mu.Lock()
	last, queued := v.queued[d.Info.Key]
	v.mu.Unlock()
	if queued && last.reason == d.Reason && last.message == d.Message {
		return noWrite
	}
	sameReason := queued && last.reason == d.Reason
	if !queued {
		c := meta.FindStatusCondition(conditions, kueue.WorkloadQuotaReserved)
		sameReason = c != nil && c.Status == metav1.ConditionFalse && c.Reason == d.Reason
	}
	switch {
	case !sameReason:
		return writeNow
	case queued && v.Workloads.Clock.Since(last.at) < v.Refresh:
		return writeLater
	case v.budget != nil && !v.budget.Allow():
		return writeLater
	}
	return writeNow
}

func (v *Verdicts) remember(d scheduler.Decision) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.queued[d.Info.Key] = queuedVerdict{reason: d.Reason, message: d.Message, at: v.Workloads.Clock.Now()}
}

// Forget drops the verdict sent for a workload: it was admitted, or the
// write failed and the verdict must be sent again.
func (v *Verdicts) Forget(key string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.queued, key)
}

// Trim bounds the memory of verdicts sent: past a multiple of the pending
// workloads it starts over (a verdict may then be written once more).
func (v *Verdicts) Trim(pending int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.queued) > 2*pending+1024 {
		v.queued = map[string]queuedVerdict{}
	}
}

// refreshLater requeues a parked workload once the refresh interval passed,
// so that its message is brought up to date even if nothing else happens.
func (v *Verdicts) refreshLater(key string) {
	v.mu.Lock()
	if v.refreshDue == nil {
		v.refreshDue = map[string]bool{}
	}
	v.refreshDue[key] = true
	arm := !v.refreshArmed
	v.refreshArmed = true
	v.mu.Unlock()
	if !arm {
		return
	}
	// Armed without the lock held: a fake clock runs the function as it
	// steps.
	v.Workloads.Clock.AfterFunc(v.Refresh, func() {
		v.mu.Lock()
		due := v.refreshDue
		v.refreshDue, v.refreshArmed = nil, false
		v.mu.Unlock()
		v.Workloads.Tracker.Queues.RequeueParked(func(info *workload.Info) bool { return due[info.Key] })
	})
}

// write records why a workload waits, on top of the newest version known
// here; nothing is written when that already says it or an admission of it
// was decided since. A conflict means a newer version exists, which is
// evaluated again; other failures are retried after the backoff.
func (v *Verdicts) write(ctx context.Context, d scheduler.Decision) Outcome {
	written := v.Workloads.Tracker.written
	if v.Workloads.Tracker.Phase(d.Info.Key) != "" || !workload.PendingDiffers(written.conditions(d.Info), d.Reason, d.Message) {
		countWrite(writePending, errSkipped)
		return Done
	}
	base := written.latest(d.Info)
	wl := base.DeepCopy()
	patch := client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})
	workload.SetPending(wl, d.Reason, d.Message, v.Workloads.Clock.Now())
	err := v.Workloads.Client.Status().Patch(ctx, wl, patch)
	countWrite(writePending, err)
	switch {
	case err == nil:
		written.record(d.Info.Key, base.ResourceVersion, wl)
		return Done
	case apierrors.IsNotFound(err):
		v.Forget(d.Info.Key)
		return Done
	case apierrors.IsConflict(err):
		// Evaluate it again later: a status change by someone else does
		// not requeue a parked workload by itself.
		v.Forget(d.Info.Key)
		v.refreshLater(d.Info.Key)
		return Done
	}
	return Retry
}
