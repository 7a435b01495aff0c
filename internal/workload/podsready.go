package workload

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// Reasons of the PodsReady condition (Kueue's).
const (
	// ReasonStarted: the pods became ready for the first time in this
	// admission.
	ReasonStarted = "Started"
	// ReasonRecovered: they are ready again after some were not.
	ReasonRecovered = "Recovered"
	// ReasonWaitForStart: they have not been ready since the admission.
	ReasonWaitForStart = "WaitForStart"
	// ReasonWaitForRecovery: they were ready, and some no longer are.
	ReasonWaitForRecovery = "WaitForRecovery"
)

// SetPodsReady records whether an admitted workload's pods are ready, and
// tells whether the condition changed. The reason tells a first start from
// a recovery: the condition is reset to WaitForStart when the
// reservation ends.
func SetPodsReady(wl *kueue.Workload, ready bool, now time.Time) bool {
	have := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadPodsReady)
	wasReady := have != nil && have.Status == metav1.ConditionTrue
	if wasReady == ready && (ready || have != nil && have.Reason != ReasonWaitForStart) {
		return false // no news: still ready, or still recovering
	}
	recovering := have != nil && (wasReady || have.Reason == ReasonWaitForRecovery)
	want := metav1.Condition{Type: kueue.WorkloadPodsReady, LastTransitionTime: metav1.NewTime(now), ObservedGeneration: wl.Generation}
	switch {
	case ready && recovering:
		want.Status, want.Reason, want.Message = metav1.ConditionTrue, ReasonRecovered, "The pods are ready again"
	case ready:
		want.Status, want.Reason, want.Message = metav1.ConditionTrue, ReasonStarted, "All pods are ready or have succeeded"
	case recovering:
		want.Status, want.Reason, want.Message = metav1.ConditionFalse, ReasonWaitForRecovery, "Some pods are no longer ready; waiting for them to recover"
	default:
		want.Status, want.Reason, want.Message = metav1.ConditionFalse, ReasonWaitForStart, "Not all pods are ready or have succeeded yet"
	}
	if have != nil && have.Status == want.Status && have.Reason == want.Reason {
		return false
	}
	meta.SetStatusCondition(&wl.Status.Conditions, want)
	return true
}

// resetPodsReady puts PodsReady back to WaitForStart when the reservation
// ends, so that the next admission's readiness is a first start.
func resetPodsReady(wl *kueue.Workload, now time.Time) {
	if meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadPodsReady) == nil {
		return
	}
	meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadPodsReady, Status: metav1.ConditionFalse,
		Reason: ReasonWaitForStart, Message: "The workload has no reservation", LastTransitionTime: metav1.NewTime(now), ObservedGeneration: wl.Generation})
}

// PodsReadyDeadline is when an admitted workload whose pods are not ready
// runs out of time: timeout after its admission while they have never been
// ready, recovery after they stopped being ready (0: no limit for a
// recovery). ok is false when there is no deadline (not admitted, ready,
// or recovering without a limit).
func PodsReadyDeadline(wl *kueue.Workload, timeout, recovery time.Duration) (deadline time.Time, recovering, ok bool) {
	admitted := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadAdmitted)
	if admitted == nil || admitted.Status != metav1.ConditionTrue || !HasQuotaReservation(wl) {
		return time.Time{}, false, false
	}
	c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadPodsReady)
	switch {
	case c != nil && c.Status == metav1.ConditionTrue:
		return time.Time{}, false, false
	case c != nil && c.Reason == ReasonWaitForRecovery && !c.LastTransitionTime.Before(&admitted.LastTransitionTime):
		if recovery <= 0 {
			return time.Time{}, true, false
		}
		return c.LastTransitionTime.Add(recovery), true, true
	}
	return admitted.LastTransitionTime.Add(timeout), false, true
}

// Backoff is the wait before the count-th requeue: base doubling per
// requeue, capped at max.
func Backoff(count int32, base, max time.Duration) time.Duration {
	d := base
	for i := int32(1); i < count && d < max; i++ {
		d *= 2
	}
	return min(d, max)
}
