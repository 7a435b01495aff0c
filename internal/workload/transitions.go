package workload

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// Reasons of the conditions sluice sets besides the contract's reasons.
const (
	reasonQuotaReserved = "QuotaReserved"
	reasonAdmitted      = "Admitted"
	reasonNoReservation = "NoReservation"
)

// SetReserved records a quota reservation in a ClusterQueue whose strategy
// asks the checks named: QuotaReserved=True, every check Pending for this
// attempt, and Admitted=True at once when there are none (Admitted=False
// naming the checks otherwise).
func SetReserved(wl *kueue.Workload, adm *kueue.Admission, checks []string, now time.Time) {
	wl.Status.Admission = adm
	t := metav1.NewTime(now)
	set := func(typ, reason, msg string, status metav1.ConditionStatus) {
		meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{
			Type: typ, Status: status, Reason: reason, Message: msg, LastTransitionTime: t, ObservedGeneration: wl.Generation})
	}
	set(kueue.WorkloadQuotaReserved, reasonQuotaReserved, fmt.Sprintf("Quota reserved in ClusterQueue %s", adm.ClusterQueue), metav1.ConditionTrue)
	SyncChecks(wl, checks, now)
	ResetChecks(wl, now)
	SyncAdmitted(wl, now, 0)
	if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted); c != nil && c.Status == metav1.ConditionTrue {
		set(kueue.WorkloadEvicted, reasonQuotaReserved, "Admitted again", metav1.ConditionFalse)
	}
	if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadPreempted); c != nil && c.Status == metav1.ConditionTrue {
		set(kueue.WorkloadPreempted, reasonQuotaReserved, "Admitted again", metav1.ConditionFalse)
	}
}

// PendingDiffers tells whether a workload's QuotaReserved=False condition
// (among its status conditions) says something other than reason and
// message: only then is it written.
func PendingDiffers(conditions []metav1.Condition, reason, message string) bool {
	c := meta.FindStatusCondition(conditions, kueue.WorkloadQuotaReserved)
	return c == nil || c.Status != metav1.ConditionFalse || c.Reason != reason || c.Message != message
}

// SetPending records why a workload waits.
func SetPending(wl *kueue.Workload, reason, message string, now time.Time) {
	meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{
		Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionFalse, Reason: reason, Message: message,
		LastTransitionTime: metav1.NewTime(now), ObservedGeneration: wl.Generation})
}

// SetEvicted takes the admission away at once: MarkEvicted then
// ClearReservation, for a workload with no job to stop first.
func SetEvicted(wl *kueue.Workload, reason, message string, requeue bool, now time.Time) {
	MarkEvicted(wl, reason, message, now)
	ClearReservation(wl, requeue, now)
}

// MarkEvicted records that the admission must end (Evicted=True) while the
// reservation stays: a job keeps its quota until it has stopped.
func MarkEvicted(wl *kueue.Workload, reason, message string, now time.Time) {
	meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{
		Type: kueue.WorkloadEvicted, Status: metav1.ConditionTrue, Reason: reason, Message: message,
		LastTransitionTime: metav1.NewTime(now), ObservedGeneration: wl.Generation})
}

// ClearReservation ends an eviction once nothing runs any more: the
// reservation cleared, and Requeued telling whether the workload queues
// again. The time it ran is added to accumulatedPastExecutionTimeSeconds.
func ClearReservation(wl *kueue.Workload, requeue bool, now time.Time) {
	t := metav1.NewTime(now)
	addPastExecution(wl, AdmittedFor(wl, now))
	reason, message := kueue.ReasonPending, "The workload has no reservation"
	if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted); c != nil && c.Status == metav1.ConditionTrue {
		reason, message = c.Reason, c.Message
	}
	set := func(typ string, status metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{
			Type: typ, Status: status, Reason: reason, Message: msg, LastTransitionTime: t, ObservedGeneration: wl.Generation})
	}
	set(kueue.WorkloadQuotaReserved, metav1.ConditionFalse, kueue.ReasonPending, "Evicted: "+message)
	set(kueue.WorkloadAdmitted, metav1.ConditionFalse, reasonNoReservation, "The workload has no reservation")
	switch at := BackoffUntil(wl); {
	case requeue && !at.IsZero():
		set(kueue.WorkloadRequeued, metav1.ConditionFalse, reason, fmt.Sprintf("Queued again at %s, after a backoff", at.UTC().Format(time.RFC3339)))
	case requeue:
		set(kueue.WorkloadRequeued, metav1.ConditionTrue, reason, "Queued again after eviction")
	default:
		set(kueue.WorkloadRequeued, metav1.ConditionFalse, reason, "Not queued again: "+message)
	}
	ResetChecks(wl, now)
	resetPodsReady(wl, now)
	wl.Status.Admission = nil
	wl.Status.ReclaimablePods = nil
	// A MultiKueue dispatch ends with the reservation it was made for.
	wl.Status.ClusterName, wl.Status.NominatedClusterNames = nil, nil
}

// BackoffUntil is when a workload that was evicted may queue again (zero
// time: it is not backing off).
func BackoffUntil(wl *kueue.Workload) time.Time {
	if rs := wl.Status.RequeueState; rs != nil && rs.RequeueAt != nil {
		return rs.RequeueAt.Time
	}
	return time.Time{}
}

// IsEvicting tells whether a workload was told to stop but still holds its
// reservation (its job is stopping).
func IsEvicting(wl *kueue.Workload) bool {
	return HasQuotaReservation(wl) && meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted)
}

// AdmittedFor is how long the workload has been admitted this time.
func AdmittedFor(wl *kueue.Workload, now time.Time) time.Duration {
	c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadAdmitted)
	if c == nil || c.Status != metav1.ConditionTrue {
		return 0
	}
	return now.Sub(c.LastTransitionTime.Time)
}

// ExecutionDeadline is when an admitted workload exceeds its
// maximumExecutionTimeSeconds, counting earlier admissions; ok is false
// when it has no limit or is not admitted.
func ExecutionDeadline(wl *kueue.Workload) (deadline time.Time, ok bool) {
	c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadAdmitted)
	if wl.Spec.MaximumExecutionTimeSeconds == nil || c == nil || c.Status != metav1.ConditionTrue {
		return time.Time{}, false
	}
	budget := time.Duration(*wl.Spec.MaximumExecutionTimeSeconds) * time.Second
	if past := wl.Status.AccumulatedPastExecutionTimeSeconds; past != nil {
		budget -= time.Duration(*past) * time.Second
	}
	return c.LastTransitionTime.Add(budget), true
}
