package integration

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/workload"
)

// SyncPodsReady writes an admitted Workload's PodsReady condition from the
// count of its job's pods that are ready or succeeded: ready once they
// reach the admitted count. A workload whose pods have not been ready yet
// gets no condition (its absence says as much, and saves a write per
// admission); one whose pods stop being ready gets WaitForRecovery.
func SyncPodsReady(ctx context.Context, w WorkloadStatusWriter, wl *kueue.Workload, ready int32, now time.Time) error {
	want := ready >= AdmittedPods(wl)
	if !want && meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadPodsReady) == nil {
		return nil
	}
	if _, err := w.Status(ctx, wl, "pods-ready", func() bool { return workload.SetPodsReady(wl, want, now) }); err != nil {
		return fmt.Errorf("updating the PodsReady condition of Workload %s: %w", wl.Name, err)
	}
	return nil
}

// AdmittedPods is how many pods an admitted Workload runs: the admitted
// count of each pod set.
func AdmittedPods(wl *kueue.Workload) int32 {
	var total int32
	for _, ps := range wl.Spec.PodSets {
		count := ps.Count
		if adm := wl.Status.Admission; adm != nil {
			for _, psa := range adm.PodSetAssignments {
				if psa.Name == ps.Name && psa.Count != nil {
					count = *psa.Count
				}
			}
		}
		total += count
	}
	return total
}
