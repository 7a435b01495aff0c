package workload

import (
	"k8s.io/apimachinery/pkg/api/meta"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// HasQuotaReservation tells whether the workload holds quota.
func HasQuotaReservation(wl *kueue.Workload) bool {
	return wl.Status.Admission != nil && meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
}

// IsAdmitted tells whether the workload is admitted.
func IsAdmitted(wl *kueue.Workload) bool {
	return meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted)
}

// IsFinished tells whether the workload finished.
func IsFinished(wl *kueue.Workload) bool {
	return meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished)
}

// IsActive tells whether the workload may be queued (spec.active).
func IsActive(wl *kueue.Workload) bool {
	return wl.Spec.Active == nil || *wl.Spec.Active
}

// IsDeactivationTarget tells whether the workload is to be deactivated (an
// admission check rejected it, or it ran out of requeues): it no longer
// queues, even before spec.active says so.
func IsDeactivationTarget(wl *kueue.Workload) bool {
	return meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadDeactivationTarget)
}

// QueuesAgain tells whether an evicted workload goes back to its queue.
func QueuesAgain(wl *kueue.Workload) bool {
	return IsActive(wl) && !IsDeactivationTarget(wl)
}

// Admissible tells whether a workload without a reservation waits in its
// queue now: active, not to be deactivated, and not backing off.
func Admissible(wl *kueue.Workload) bool {
	return QueuesAgain(wl) && BackoffUntil(wl).IsZero()
}

// PodsReady tells whether the workload's pods are ready.
func PodsReady(wl *kueue.Workload) bool {
	return meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadPodsReady)
}
