package multikueue

import (
	"context"
	"fmt"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/workload"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// A Job submitted to the manager is dispatched (spec.managedBy set by the
// webhook), runs in exactly one worker, its status comes back to the
// manager's Job, and when it completes there the manager's Job and
// Workload finish and the worker's objects are deleted.
func TestJobRunsInOneWorkerAndFinishesInTheManager(t *testing.T) {
	s := newSetup(t, "4", "4", workerNames...)
	j := framework.Job(s.ns, "job", "lq", 2, "1")
	cluster.MustCreate(t, j)
	if got := getJob(t, cluster.Client, j); ptr.Deref(got.Spec.ManagedBy, "") != kueue.MultiKueueControllerName {
		t.Fatalf("spec.managedBy = %v, want %s", got.Spec.ManagedBy, kueue.MultiKueueControllerName)
	}
	wl := framework.JobWorkload(j)
	worker := dispatchedTo(t, wl, s.check)
	remote := remoteJob(t, worker, j)
	if remote.Spec.ManagedBy != nil || remote.Labels[kueue.PrebuiltWorkloadLabel] != wl.Name || remote.Labels[kueue.MultiKueueOriginLabel] != "multikueue" {
		t.Fatalf("worker Job: managedBy %v, labels %v", remote.Spec.ManagedBy, remote.Labels)
	}
	goneFrom(t, other(worker), &kueue.Workload{ObjectMeta: wl.ObjectMeta})
	goneFrom(t, other(worker), &batchv1.Job{ObjectMeta: j.ObjectMeta})
	framework.Eventually(t, "the worker's Job to be started by the worker's sluice", func(ctx context.Context) (bool, error) {
		return !ptr.Deref(getJob(t, workers[worker].Client, j).Spec.Suspend, true), nil
	})

	runPods(t, worker, j, 2)
	framework.Eventually(t, "the manager's Job to show the worker's pods", func(ctx context.Context) (bool, error) {
		got := getJob(t, cluster.Client, j)
		return got.Status.Active == 2 && ptr.Deref(got.Status.Ready, 0) == 2, nil
	})
	complete(t, worker, j)
	cluster.WaitWorkload(t, wl, "finished", framework.ConditionIs(kueue.WorkloadFinished, "True", "Succeeded"))
	if got := getJob(t, cluster.Client, j); got.Status.Succeeded != 2 {
		t.Fatalf("the manager's Job has succeeded=%d, want 2", got.Status.Succeeded)
	}
	goneFrom(t, worker, &batchv1.Job{ObjectMeta: j.ObjectMeta})
	goneFrom(t, worker, &kueue.Workload{ObjectMeta: wl.ObjectMeta})
}

// The manager's ClusterQueue bounds what runs across all workers, however
// much they have: with 2 CPUs in the manager and plenty in the workers,
// the third 1-CPU Job waits in the manager and is sent to no worker.
func TestManagerQuotaHoldsAcrossWorkers(t *testing.T) {
	s := newSetup(t, "2", "10", workerNames...)
	var wls []*kueue.Workload
	for i := range 3 {
		j := framework.Job(s.ns, fmt.Sprintf("job-%d", i), "lq", 1, "1")
		cluster.MustCreate(t, j)
		wls = append(wls, framework.JobWorkload(j))
	}
	dispatchedTo(t, wls[0], s.check)
	dispatchedTo(t, wls[1], s.check)
	cluster.WaitWorkload(t, wls[2], "waiting for the manager's quota", framework.ConditionIs(kueue.WorkloadQuotaReserved, "False", "", "insufficient quota"))
	for _, w := range workerNames {
		goneFrom(t, w, &kueue.Workload{ObjectMeta: wls[2].ObjectMeta})
	}
	if err := framework.CheckQuotaInvariant(context.Background(), cluster.Client); err != nil {
		t.Fatal(err)
	}
}

// A tenant who sets spec.managedBy to the Job controller on a Job sent to
// a MultiKueue queue would have it run in the manager as well as in a
// worker: the check rejects it, and the Job never runs anywhere.
func TestJobNotManagedByMultiKueueIsRejected(t *testing.T) {
	s := newSetup(t, "4", "4", workerNames...)
	j := framework.Job(s.ns, "job", "lq", 1, "1")
	j.Spec.ManagedBy = ptr.To("kubernetes.io/job-controller")
	cluster.MustCreate(t, j)
	wl := framework.JobWorkload(j)
	got := cluster.WaitWorkload(t, wl, "deactivated by the rejection", func(wl *kueue.Workload) error {
		c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted)
		if workload.IsActive(wl) || c == nil || c.Reason != "DeactivatedDueToAdmissionCheck" {
			return fmt.Errorf("active %v, Evicted %+v", workload.IsActive(wl), c)
		}
		return nil
	})
	if msg := meta.FindStatusCondition(got.Status.Conditions, kueue.WorkloadEvicted).Message; !strings.Contains(msg, "spec.managedBy") {
		t.Fatalf("the eviction message %q does not say why", msg)
	}
	if !ptr.Deref(getJob(t, cluster.Client, j).Spec.Suspend, false) {
		t.Fatal("a Job not managed by MultiKueue runs in the manager")
	}
	for _, w := range workerNames {
		goneFrom(t, w, &batchv1.Job{ObjectMeta: j.ObjectMeta})
	}
}
