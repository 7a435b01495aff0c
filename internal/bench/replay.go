package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/controller"
	"github.com/sluicehq/sluice/internal/patch"
)

// replayCeiling measures what the API server alone sustains for the same
// traffic: n Workload creations with the scenario's creators, each followed
// by the admission write the manager would send (the same merge patch,
// conditional on the version), with the manager's number of writers, and no
// scheduling. It returns admissions per second. The manager must be stopped.
func replayCeiling(ctx context.Context, c client.Client, plan []PlannedWorkload, n, creators int) (float64, error) {
	if n == 0 {
		return 0, nil
	}
	plan = immediately(plan[:n])
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	type createdWorkload struct {
		i  int
		wl *kueue.Workload
	}
	toAdmit := make(chan createdWorkload, n)
	var wg sync.WaitGroup
	for range controller.Writers {
		wg.Go(func() {
			for cw := range toAdmit {
				if err := writeReplayAdmission(ctx, c, cw.wl, plan[cw.i]); err != nil {
					cancel(err)
				}
			}
		})
	}
	start := time.Now()
	_, err := createOnSchedule(ctx, c, replayNamespace, plan, creators, start, nil,
		func(i int, wl *kueue.Workload) { toAdmit <- createdWorkload{i: i, wl: wl} })
	close(toAdmit)
	wg.Wait()
	elapsed := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("replaying creations: %w", err)
	}
	if err := context.Cause(ctx); err != nil {
		return 0, fmt.Errorf("replaying admissions: %w", err)
	}
	return float64(n) / elapsed.Seconds(), nil
}

func writeReplayAdmission(ctx context.Context, c client.Client, created *kueue.Workload, w PlannedWorkload) error {
	if created.ResourceVersion == "" { // created by a retried request: read what the server holds
		if err := c.Get(ctx, client.ObjectKeyFromObject(created), created); err != nil {
			return err
		}
	}
	wl := created.DeepCopy()
	admit(wl, w, time.Now())
	return c.Status().Patch(ctx, wl, patch.OnVersion(created))
}

// immediately is plan with every creation due at once.
func immediately(plan []PlannedWorkload) []PlannedWorkload {
	out := make([]PlannedWorkload, len(plan))
	for i, w := range plan {
		w.At = 0
		out[i] = w
	}
	return out
}
