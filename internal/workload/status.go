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
