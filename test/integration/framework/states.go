package framework

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// Admitted is nil for a Workload admitted and not finished (Reserved, and
// Admitted=True), and otherwise says what its conditions are, for WaitFor
// and Eventually.
func Admitted(wl *kueue.Workload) error {
	if !Reserved(wl) || !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted) {
		return fmt.Errorf("not admitted: %v", wl.Status.Conditions)
	}
	return nil
}

// Running is nil when a job's suspend flag (spec.suspend, or its run
// policy's) is off.
func Running(suspend *bool) error {
	if ptr.Deref(suspend, false) {
		return errors.New("suspended")
	}
	return nil
}

// Suspended is nil when a job's suspend flag is on.
func Suspended(suspend *bool) error {
	if !ptr.Deref(suspend, false) {
		return errors.New("running")
	}
	return nil
}
