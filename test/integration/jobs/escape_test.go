package jobs

import (
	"context"
	"fmt"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// A running Job whose parallelism is raised beyond its admission (1 of a
// 2-CPU queue raised to 6) must not get a single pod more: the raise
// suspends it in the same update, its Workload is evicted (JobChanged),
// and it queues again with its new count, which waits (it can never fit).
func TestRaisedParallelismOfARunningJobStopsAndRequeues(t *testing.T) {
	q := newQueue(t, "2", false)
	j := newJob(q.ns, "lq", 1, "1")
	j.Spec.Completions = ptr.To(int32(12))
	cluster.MustCreate(t, j)
	waitWorkload(t, j, "to be admitted", admitted)
	waitJob(t, j, "to run", running)
	startPods(t, j, 1)

	update(t, j, func() { j.Spec.Parallelism = ptr.To(int32(6)) })
	// The update itself came back suspended: the Job controller never saw
	// it running with 6.
	if !ptr.Deref(j.Spec.Suspend, false) {
		t.Fatalf("parallelism raised to 6 on a running Job: suspend=%v after the update, want true", j.Spec.Suspend)
	}
	waitWorkload(t, j, "to be evicted as changed", func(wl *kueue.Workload) error {
		c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted)
		if c == nil || c.Reason != integration.EvictedReasonJobChanged || !strings.Contains(c.Message, "main has 6 pods, 1 admitted") {
			return fmt.Errorf("Evicted: %+v", c)
		}
		return nil
	})
	waitEvent(t, j, integration.EventStopped, "no longer matches its admission", "6 pods, 1 admitted")
	// The Job controller removes its pods; then the quota goes back.
	setJobStatus(t, j, func(current *batchv1.Job) {
		current.Status.Active, current.Status.Ready, current.Status.StartTime = 0, ptr.To(int32(0)), nil
	})
	wl := waitWorkload(t, j, "to queue again with 6 pods", func(wl *kueue.Workload) error {
		if wl.Status.Admission != nil || wl.Spec.PodSets[0].Count != 6 {
			return fmt.Errorf("admission %v, count %d", wl.Status.Admission, wl.Spec.PodSets[0].Count)
		}
		return nil
	})
	cluster.WaitPending(t, wl, kueue.ReasonExceedsMaxQuota)
	if got := getJob(t, j); !ptr.Deref(got.Spec.Suspend, false) || ptr.Deref(got.Spec.Parallelism, 0) != 6 {
		t.Errorf("job suspend=%v parallelism=%v, want suspended with the user's 6", got.Spec.Suspend, got.Spec.Parallelism)
	}
	if err := framework.CheckQuotaInvariant(context.Background(), cluster.Client); err != nil {
		t.Fatal(err)
	}
}

// A lowered parallelism is not a stop: the pods it no longer has are
// reclaimable and their quota frees up while it runs.
func TestLoweredParallelismOfARunningJobIsReclaimable(t *testing.T) {
	q := newQueue(t, "4", false)
	j := newJob(q.ns, "lq", 4, "1")
	cluster.MustCreate(t, j)
	waitWorkload(t, j, "to be admitted", admitted)
	waitJob(t, j, "to run", running)
	startPods(t, j, 4)
	update(t, j, func() { j.Spec.Parallelism = ptr.To(int32(1)) })
	waitWorkload(t, j, "to report 3 reclaimable pods", func(wl *kueue.Workload) error {
		if len(wl.Status.ReclaimablePods) != 1 || wl.Status.ReclaimablePods[0].Count != 3 {
			return fmt.Errorf("reclaimablePods %v", wl.Status.ReclaimablePods)
		}
		return admitted(wl)
	})
	if got := getJob(t, j); ptr.Deref(got.Spec.Suspend, false) {
		t.Error("a Job whose parallelism was lowered was stopped")
	}
	other := newJob(q.ns, "lq", 3, "1")
	cluster.MustCreate(t, other)
	waitWorkload(t, other, "to be admitted in the freed quota", admitted)
}

// A suspended Job whose queue-name is removed (and that no other rule
// queues) gives its Workload up: an admitted Workload without a job to run
// would hold quota for nothing.
func TestRemovedQueueNameDeletesTheWorkload(t *testing.T) {
	q := newQueue(t, "1", false)
	blocker := newJob(q.ns, "lq", 1, "1")
	cluster.MustCreate(t, blocker)
	waitJob(t, blocker, "to run", running)

	j := newJob(q.ns, "lq", 1, "1")
	cluster.MustCreate(t, j)
	waitWorkload(t, j, "to wait for quota", pending)
	update(t, j, func() { delete(j.Labels, kueue.QueueNameLabel) })
	framework.Eventually(t, "the Workload of the unqueued Job to be deleted", func(ctx context.Context) (bool, error) {
		err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(workloadOf(j)), &kueue.Workload{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	// Quota freed by the blocker goes to nobody: the Job is not queued.
	complete(t, blocker)
	waitWorkload(t, blocker, "to finish", finished(integration.FinishedReasonSucceeded))
	if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(workloadOf(j)), &kueue.Workload{}); !apierrors.IsNotFound(err) {
		t.Errorf("the unqueued Job's Workload came back: %v", err)
	}
}
