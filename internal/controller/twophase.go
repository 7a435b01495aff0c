package controller

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/apply"
	"github.com/sluicehq/sluice/internal/patch"
	"github.com/sluicehq/sluice/internal/workload"
)

// The second phase of admission: a reserved workload is admitted once its
// admission checks are Ready, evicted (and queued again after a backoff)
// when one asks to retry or its pods are not ready in time, deactivated
// when one rejects it or it ran out of requeues.

// PodsReadyPolicy is waitForPodsReady as the WorkloadReconciler acts on it.
type PodsReadyPolicy struct {
	// Timeout is how long an admitted workload's pods may take to be ready.
	Timeout time.Duration
	// RecoveryTimeout is how long pods that were ready may stay not ready;
	// 0: without limit.
	RecoveryTimeout time.Duration
	// BackoffLimitCount ends the requeues: past it the workload is
	// deactivated; nil: no limit.
	BackoffLimitCount *int32
	// BackoffBase and BackoffMax bound the wait before a requeue: base
	// doubling per requeue, at most max.
	BackoffBase, BackoffMax time.Duration
}

// Reasons of the DeactivationTarget condition (Kueue's underlying causes).
const (
	deactivatedByAdmissionCheck = "AdmissionCheck"
	deactivatedByRequeuingLimit = "RequeuingLimitExceeded"
	reasonBackoffFinished       = "BackoffFinished"
	writeKindAdmissionChecks    = "admission-checks"
	writeKindDeactivationTarget = "deactivation-target"
	writeKindBackoffFinished    = "backoff-finished"
)

// reconcileChecks moves a reserved workload through its admission checks.
// It reports when to look again (zero: no need) and whether it queued a
// write that ends the reservation.
func (r *WorkloadReconciler) reconcileChecks(wl *kueue.Workload, now time.Time) (next time.Time, ending bool) {
	cq, ok := r.Tracker.Cache.ClusterQueue(string(wl.Status.Admission.ClusterQueue))
	if !ok {
		return time.Time{}, false
	}
	needed := workload.NeededChecks(cq.Spec.AdmissionChecksStrategy, wl.Status.Admission)
	key := workload.Key(wl)
	if rejected := workload.ChecksIn(wl, kueue.CheckStateRejected); len(rejected) > 0 {
		message := "admission check " + workload.DescribeChecks(rejected) + " rejected the workload"
		r.Workloads.Update(key, writeKindDeactivationTarget, func(wl *kueue.Workload) bool {
			return workload.HasQuotaReservation(wl) && len(workload.ChecksIn(wl, kueue.CheckStateRejected)) > 0 &&
				setDeactivationTarget(wl, deactivatedByAdmissionCheck, message)
		}, nil)
		return time.Time{}, true
	}
	if retry := workload.ChecksIn(wl, kueue.CheckStateRetry); len(retry) > 0 {
		r.evictForRetry(key, retry)
		return time.Time{}, true
	}
	sync := func(wl *kueue.Workload) bool {
		if !workload.HasQuotaReservation(wl) || workload.IsEvicting(wl) || workload.IsFinished(wl) {
			return false
		}
		synced := workload.SyncChecks(wl, needed, r.Clock.Now())
		return workload.SyncAdmitted(wl, r.Clock.Now(), r.StuckAfter) || synced
	}
	// Most workloads have no checks and are admitted: nothing to queue. The
	// others are tried on a copy first, so that only a change is queued.
	if (len(needed) > 0 || len(wl.Status.AdmissionChecks) > 0 || !workload.IsAdmitted(wl)) && sync(wl.DeepCopy()) {
		r.Workloads.Update(key, writeKindAdmissionChecks, sync, r.countAdmission)
	}
	for _, c := range wl.Status.AdmissionChecks {
		if c.State != kueue.CheckStateReady {
			next = earliest(next, workload.NextStuckStep(c.LastTransitionTime.Time, now, r.StuckAfter))
		}
	}
	return next, false
}

// evictForRetry ends the reservation of a workload a check asks to retry:
// it queues again once every such check's requeueAfterSeconds passed.
func (r *WorkloadReconciler) evictForRetry(key string, retry []kueue.AdmissionCheckState) {
	message := "admission check " + workload.DescribeChecks(retry) + " asks to retry"
	r.Workloads.Evict(key, func(wl *kueue.Workload) bool {
		if !workload.HasQuotaReservation(wl) || workload.IsEvicting(wl) || workload.IsFinished(wl) ||
			len(workload.ChecksIn(wl, kueue.CheckStateRetry)) == 0 {
			return false
		}
		now := r.Clock.Now()
		if at := workload.RetryAt(wl); at.After(now) {
			setRequeueAt(wl, at)
		}
		workload.CountRetries(wl)
		r.markEvicted(wl, kueue.EvictedByAdmissionCheck, message, true, now)
		return true
	}, r.Workloads.CountEviction)
}

// countAdmission counts a workload whose checks all turned Ready.
func (r *WorkloadReconciler) countAdmission(before, after *kueue.Workload) {
	if workload.IsAdmitted(before) || !workload.IsAdmitted(after) {
		return
	}
	reserved := meta.FindStatusCondition(after.Status.Conditions, kueue.WorkloadQuotaReserved)
	now := r.Clock.Now()
	m := apply.MetricsAdmission(after)
	m.Waited = now.Sub(workload.QueueTime(after))
	r.Workloads.Metrics.ChecksPassed(m, now.Sub(reserved.LastTransitionTime.Time))
}

// reconcilePodsReady evicts an admitted workload whose pods were not ready
// in time, and says when to look again otherwise.
func (r *WorkloadReconciler) reconcilePodsReady(wl *kueue.Workload, now time.Time) (next time.Time, ending bool) {
	p := r.PodsReady
	if p == nil {
		return time.Time{}, false
	}
	deadline, recovering, limited := workload.PodsReadyDeadline(wl, p.Timeout, p.RecoveryTimeout)
	if !limited {
		return time.Time{}, false
	}
	if now.Before(deadline) {
		return deadline, false
	}
	limit, what := p.Timeout, "PodsReady timeout"
	if recovering {
		limit, what = p.RecoveryTimeout, "PodsReady recovery timeout"
	}
	r.Workloads.Evict(workload.Key(wl), func(wl *kueue.Workload) bool {
		now := r.Clock.Now()
		if d, _, ok := workload.PodsReadyDeadline(wl, p.Timeout, p.RecoveryTimeout); !ok || now.Before(d) || workload.IsEvicting(wl) {
			return false
		}
		count := ptr.Deref(ptrCount(wl), 0) + 1
		message := fmt.Sprintf("Exceeded the %s of %s: the pods were not ready in time", what, limit)
		if p.BackoffLimitCount != nil && count > *p.BackoffLimitCount {
			// Deactivated, and evicted as such (DeactivatedDueTo...).
			return setDeactivationTarget(wl, deactivatedByRequeuingLimit,
				fmt.Sprintf("%s, after %d requeues (backoffLimitCount %d)", message, count-1, *p.BackoffLimitCount))
		}
		wl.Status.RequeueState = &kueue.RequeueState{Count: &count}
		setRequeueAt(wl, now.Add(workload.Backoff(count, p.BackoffBase, p.BackoffMax)))
		r.markEvicted(wl, kueue.EvictedByPodsReadyTimeout, message, true, now)
		return true
	}, r.Workloads.CountEviction)
	return time.Time{}, true
}

func ptrCount(wl *kueue.Workload) *int32 {
	if wl.Status.RequeueState == nil {
		return nil
	}
	return wl.Status.RequeueState.Count
}

// markEvicted evicts: a job's Workload is only marked (its integration
// clears the reservation once the job stopped), another one loses the
// reservation in the same write.
func (r *WorkloadReconciler) markEvicted(wl *kueue.Workload, reason, message string, requeue bool, now time.Time) {
	if r.stopsFirst(wl) {
		workload.MarkEvicted(wl, reason, message, now)
	} else {
		workload.SetEvicted(wl, reason, message, requeue, now)
	}
}

func setRequeueAt(wl *kueue.Workload, at time.Time) {
	if wl.Status.RequeueState == nil {
		wl.Status.RequeueState = &kueue.RequeueState{}
	}
	wl.Status.RequeueState.RequeueAt = ptr.To(metav1.NewTime(at))
}

func setDeactivationTarget(wl *kueue.Workload, reason, message string) bool {
	return meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadDeactivationTarget, Status: metav1.ConditionTrue,
		Reason: reason, Message: message, ObservedGeneration: wl.Generation})
}

// clearDeactivationTarget removes the mark once it is acted on.
func clearDeactivationTarget(wl *kueue.Workload) bool {
	return meta.RemoveStatusCondition(&wl.Status.Conditions, kueue.WorkloadDeactivationTarget)
}

// deactivate sets spec.active=false on a workload marked as a deactivation
// target; its eviction (if it holds a reservation) follows from that.
func (r *WorkloadReconciler) deactivate(ctx context.Context, wl *kueue.Workload) error {
	wl = wl.DeepCopy() // what was read is the informer's, read-only
	if _, err := patch.Object(ctx, r.Client, wl, patch.Always(func() { wl.Spec.Active = ptr.To(false) })); err != nil {
		return fmt.Errorf("deactivating workload %s: %w", wl.Name, err)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("deactivated a workload", "workload", workload.Key(wl),
		"cause", meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadDeactivationTarget).Message)
	return nil
}

// reconcileBackoff queues a pending workload again once its backoff is
// over (Requeued=True, reason BackoffFinished), or says when it will be.
func (r *WorkloadReconciler) reconcileBackoff(wl *kueue.Workload) ctrl.Result {
	at := workload.BackoffUntil(wl)
	if at.IsZero() || workload.HasQuotaReservation(wl) || workload.IsFinished(wl) || !workload.QueuesAgain(wl) {
		return ctrl.Result{}
	}
	if left := at.Sub(r.Clock.Now()); left > 0 {
		return ctrl.Result{RequeueAfter: left}
	}
	r.Workloads.Update(workload.Key(wl), writeKindBackoffFinished, func(wl *kueue.Workload) bool {
		at := workload.BackoffUntil(wl)
		if at.IsZero() || r.Clock.Now().Before(at) || workload.HasQuotaReservation(wl) {
			return false
		}
		wl.Status.RequeueState.RequeueAt = nil
		meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadRequeued, Status: metav1.ConditionTrue,
			Reason: reasonBackoffFinished, Message: "The backoff is over: queued again", LastTransitionTime: metav1.NewTime(r.Clock.Now()),
			ObservedGeneration: wl.Generation})
		return true
	}, nil)
	return ctrl.Result{}
}

// earliest is the earlier of two times, a zero time counting as none.
func earliest(a, b time.Time) time.Time {
	switch {
	case a.IsZero():
		return b
	case b.IsZero() || a.Before(b):
		return a
	}
	return b
}
