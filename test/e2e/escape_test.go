package e2e

import (
	"context"
	"fmt"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// runningPods counts the Job's pods that run (or may start: bound, not
// ended, not being deleted).
func runningPods(ctx context.Context, c client.Client, j *batchv1.Job) (int, error) {
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(j.Namespace), client.MatchingLabels{batchv1.JobNameLabel: j.Name}); err != nil {
		return 0, err
	}
	n := 0
	for _, p := range pods.Items {
		if p.DeletionTimestamp.IsZero() && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			n++
		}
	}
	return n, nil
}

// A running Job of one 1-CPU pod in a 2-CPU queue whose parallelism is
// raised to 6 never gets a second pod from the real Job controller: the
// raise comes back suspended, the Job stops, and it waits with its new
// count (which can never fit). Lowered to 2 it runs 2 pods.
func TestRaisedParallelismNeverRunsBeyondTheAdmission(t *testing.T) {
	c := sharedClient(t)
	e2eQueue(t, c, "e2e-raise", "on-demand", "2")
	j := queuedJob("e2e-raise", "raised", 1, "600s")
	j.Spec.Completions = ptr.To(int32(12))
	if err := c.Create(t.Context(), j); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Job's pod to run", func(ctx context.Context) (bool, error) {
		n, err := runningPods(ctx, c, j)
		return n == 1, err
	})
	setParallelism := func(n int32) {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := c.Get(t.Context(), client.ObjectKeyFromObject(j), j); err != nil {
				return err
			}
			j.Spec.Parallelism = ptr.To(n)
			return c.Update(t.Context(), j)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	setParallelism(6)
	most := 0
	eventually(t, "the Job to wait, suspended, with 6 pods to admit", func(ctx context.Context) (bool, error) {
		n, err := runningPods(ctx, c, j)
		if err != nil {
			return false, err
		}
		most = max(most, n)
		if err := c.Get(ctx, client.ObjectKeyFromObject(j), j); err != nil {
			return false, err
		}
		wls := &kueue.WorkloadList{}
		if err := c.List(ctx, wls, client.InNamespace(j.Namespace)); err != nil || len(wls.Items) != 1 {
			return false, err
		}
		wl := &wls.Items[0]
		reserved := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
		return n == 0 && ptr.Deref(j.Spec.Suspend, false) && wl.Spec.PodSets[0].Count == 6 &&
			reserved != nil && reserved.Reason == kueue.ReasonExceedsMaxQuota, nil
	})
	if most > 1 {
		t.Errorf("%d pods ran at once after the raise; 1 was admitted", most)
	}
	setParallelism(2)
	eventually(t, "the Job to run 2 pods once its count fits", func(ctx context.Context) (bool, error) {
		n, err := runningPods(ctx, c, j)
		if n > 2 {
			return false, fmt.Errorf("%d pods run in a 2-CPU queue", n)
		}
		return n == 2, err
	})
}
