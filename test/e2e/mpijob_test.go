package e2e

import (
	"context"
	"fmt"
	"testing"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// The MPI operator (v0.6, --with mpi) runs an MPIJob as a launcher Job and
// worker Pods, and reports the job done when the launcher is.

// queuedMPIJob is an MPIJob in LocalQueue lq of a 1-CPU launcher running
// for launchFor and two 1-CPU workers that run until deleted.
func queuedMPIJob(ns, name, launchFor string) *mpiv2.MPIJob {
	return &mpiv2.MPIJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{kueue.QueueNameLabel: "lq"}},
		Spec: mpiv2.MPIJobSpec{MPIReplicaSpecs: map[mpiv2.MPIReplicaType]*mpiv2.ReplicaSpec{
			mpiv2.MPIReplicaTypeLauncher: {Replicas: ptr.To[int32](1), Template: oneCPUTemplate(launchFor)},
			mpiv2.MPIReplicaTypeWorker:   {Replicas: ptr.To[int32](2), Template: oneCPUTemplate("")},
		}},
	}
}

func mpiJobSucceeded(ctx context.Context, c client.Client, job *mpiv2.MPIJob) (bool, error) {
	if err := c.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
		return false, err
	}
	for _, cond := range job.Status.Conditions {
		if cond.Status != corev1.ConditionTrue {
			continue
		}
		switch cond.Type {
		case mpiv2.JobFailed:
			return false, fmt.Errorf("MPIJob %s failed: %s", job.Name, cond.Message)
		case mpiv2.JobSucceeded:
			return true, nil
		}
	}
	return false, nil
}

// Two MPIJobs of three 1-CPU pods in a 3-CPU queue, run by the MPI
// operator: the second waits suspended with no pod. The first's launcher
// ends, the operator reports it succeeded and, with the clean-pod policy
// sluice started it with, deletes its workers, which the operator's
// default would have left running on quota given back. Then the second
// runs and succeeds.
func TestMPIJobsWaitRunAndSucceedWithTheMPIOperator(t *testing.T) {
	c := sharedClient(t)
	const ns = "e2e-mpijob"
	e2eQueue(t, c, ns, "on-demand", "3")
	first, second := queuedMPIJob(ns, "first", "8s"), queuedMPIJob(ns, "second", "1s")
	firstRunsSecondWaits(t, c, ns, first, second, "the first MPIJob's workers to run", func(ctx context.Context) (bool, error) {
		running, _, err := podCounts(ctx, c, ns, map[string]string{mpiv2.JobNameLabel: first.Name, mpiv2.JobRoleLabel: "worker"})
		return running == 2, err
	})
	if !ptr.Deref(second.Spec.RunPolicy.Suspend, false) {
		t.Errorf("the waiting MPIJob is not suspended")
	}
	expectNoPods(t, c, ns, map[string]string{mpiv2.JobNameLabel: second.Name}, "the waiting MPIJob")

	for _, job := range []*mpiv2.MPIJob{first, second} {
		eventually(t, "MPIJob "+job.Name+" to succeed", func(ctx context.Context) (bool, error) { return mpiJobSucceeded(ctx, c, job) })
		eventually(t, "the workers of MPIJob "+job.Name+" to be deleted", func(ctx context.Context) (bool, error) {
			running, _, err := podCounts(ctx, c, ns, map[string]string{mpiv2.JobNameLabel: job.Name, mpiv2.JobRoleLabel: "worker"})
			return running == 0, err
		})
		eventually(t, "the Workload of MPIJob "+job.Name+" to finish", func(ctx context.Context) (bool, error) {
			wl, err := workloadOwnedBy(ctx, c, ns, job.UID)
			return wl != nil && meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished), err
		})
	}
	eventually(t, "the queue to be empty", func(ctx context.Context) (bool, error) { return queueIsEmpty(ctx, c, ns) })
}
