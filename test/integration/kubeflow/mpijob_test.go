package kubeflow

import (
	"context"
	"fmt"
	"strings"
	"testing"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
	"github.com/sluicehq/sluice/internal/integration/mpijob"
	"github.com/sluicehq/sluice/test/integration/framework"
)

func newQueue(t *testing.T, cpu string) (string, string) {
	t.Helper()
	return cluster.NewQueue(t, "mpi", cpu)
}

func replica(n int32) *mpiv2.ReplicaSpec {
	return &mpiv2.ReplicaSpec{Replicas: ptr.To(n), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "mpi", Image: "mpi",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}}
}

// newMPIJob is an MPIJob of a launcher and workers pods of 1 CPU in
// LocalQueue lq.
func newMPIJob(ns string, workers int32) *mpiv2.MPIJob {
	return &mpiv2.MPIJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster.Unique("mpijob"), Labels: map[string]string{kueue.QueueNameLabel: "lq"}},
		Spec: mpiv2.MPIJobSpec{MPIReplicaSpecs: map[mpiv2.MPIReplicaType]*mpiv2.ReplicaSpec{
			mpiv2.MPIReplicaTypeLauncher: replica(1), mpiv2.MPIReplicaTypeWorker: replica(workers)}}}
}

func workloadOf(job *mpiv2.MPIJob) *kueue.Workload {
	return &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: integration.WorkloadName(mpijob.Kind.GVK, job.Name, job.UID)}}
}

func waitMPIJob(t *testing.T, job *mpiv2.MPIJob, what string, cond func(*mpiv2.MPIJob) error) *mpiv2.MPIJob {
	t.Helper()
	return framework.WaitFor(t, cluster.Client, job, what, cond)
}

func running(job *mpiv2.MPIJob) error { return framework.Running(job.Spec.RunPolicy.Suspend) }

func TestMPIJobIsQueuedStartedAndFinished(t *testing.T) {
	ns, flavor := newQueue(t, "3")
	job := newMPIJob(ns, 2)
	cluster.MustCreate(t, job)
	if !ptr.Deref(job.Spec.RunPolicy.Suspend, false) {
		t.Fatal("the webhook did not create the queued MPIJob suspended")
	}
	wl := cluster.WaitWorkload(t, workloadOf(job), "to be admitted", framework.Admitted)
	if len(wl.Spec.PodSets) != 2 || wl.Spec.PodSets[0].Name != "launcher" || wl.Spec.PodSets[0].Count != 1 || wl.Spec.PodSets[1].Name != "worker" || wl.Spec.PodSets[1].Count != 2 {
		t.Fatalf("pod sets %+v, want launcher=1 worker=2", wl.Spec.PodSets)
	}
	started := waitMPIJob(t, job, "to run", running)
	for rt, spec := range started.Spec.MPIReplicaSpecs {
		if spec.Template.Spec.NodeSelector["pool"] != flavor {
			t.Errorf("%s: nodeSelector %v, want the flavor's pool", rt, spec.Template.Spec.NodeSelector)
		}
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		current := &mpiv2.MPIJob{}
		if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(job), current); err != nil {
			return err
		}
		current.Status.Conditions = []mpiv2.JobCondition{{Type: mpiv2.JobSucceeded, Status: corev1.ConditionTrue, Reason: "MPIJobSucceeded", Message: "all done"}}
		return cluster.Client.Status().Update(context.Background(), current)
	})
	if err != nil {
		t.Fatal(err)
	}
	cluster.WaitWorkload(t, wl, "to finish", framework.ConditionIs(kueue.WorkloadFinished, metav1.ConditionTrue, integration.FinishedReasonSucceeded, "all done"))
}

func TestMPIJobWaitsUntilItFits(t *testing.T) {
	ns, _ := newQueue(t, "2")
	job := newMPIJob(ns, 2)
	cluster.MustCreate(t, job)
	wl := cluster.WaitWorkload(t, workloadOf(job), "to exist", func(*kueue.Workload) error { return nil })
	cluster.WaitPending(t, wl, kueue.ReasonExceedsMaxQuota)
}

func TestMPIJobWebhookRules(t *testing.T) {
	ns, _ := newQueue(t, "3")
	for _, tc := range []struct {
		name   string
		mutate func(*mpiv2.MPIJob)
		want   string
	}{
		{"no launcher", func(j *mpiv2.MPIJob) { delete(j.Spec.MPIReplicaSpecs, mpiv2.MPIReplicaTypeLauncher) }, "spec.mpiReplicaSpecs[Launcher]: Required value"},
		{"two launchers", func(j *mpiv2.MPIJob) {
			j.Spec.MPIReplicaSpecs[mpiv2.MPIReplicaTypeLauncher].Replicas = ptr.To(int32(2))
		}, "an MPIJob has one launcher"},
		{"a standalone worker template", func(j *mpiv2.MPIJob) {
			j.Spec.MPIReplicaSpecs[mpiv2.MPIReplicaTypeWorker].Template.Annotations = map[string]string{kueue.StandaloneAnnotation: "true"}
		}, "pods of a queued MPIJob are already counted by its Workload"},
		{"workers that outlive it", func(j *mpiv2.MPIJob) {
			j.Spec.RunPolicy.CleanPodPolicy = ptr.To(mpiv2.CleanPodPolicyNone)
		}, `spec.runPolicy.cleanPodPolicy: Invalid value: "None"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := newMPIJob(ns, 1)
			tc.mutate(job)
			err := cluster.Client.Create(context.Background(), job)
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("create: %v, want Invalid with %q", err, tc.want)
			}
		})
	}
}

// More workers on a running MPIJob suspend it in the same update.
func TestGrownRunningMPIJobStopsAndRequeues(t *testing.T) {
	ns, _ := newQueue(t, "3")
	job := newMPIJob(ns, 2)
	cluster.MustCreate(t, job)
	started := waitMPIJob(t, job, "to run", running)
	started.Spec.MPIReplicaSpecs[mpiv2.MPIReplicaTypeWorker].Replicas = ptr.To(int32(4))
	if err := cluster.Client.Update(context.Background(), started); err != nil {
		t.Fatal(err)
	}
	if !ptr.Deref(started.Spec.RunPolicy.Suspend, false) {
		t.Fatal("a running MPIJob given more workers was not suspended in the same update")
	}
	wl := cluster.WaitWorkload(t, workloadOf(job), "to queue again with 4 workers", func(wl *kueue.Workload) error {
		if wl.Status.Admission != nil || len(wl.Spec.PodSets) != 2 || wl.Spec.PodSets[1].Count != 4 {
			return fmt.Errorf("admission %v, pod sets %d", wl.Status.Admission != nil, len(wl.Spec.PodSets))
		}
		return nil
	})
	cluster.WaitPending(t, wl, kueue.ReasonExceedsMaxQuota)
}

// The MPI operator's default clean-pod policy, None, leaves the workers
// running once the launcher is done, when the finished Workload has given
// their quota back: sluice starts an MPIJob with Running (the operator
// then deletes them), and an update can't take it away while it runs. A
// policy the user chose (All) is kept.
func TestMPIJobWorkersEndWithIt(t *testing.T) {
	ns, _ := newQueue(t, "6")
	job := newMPIJob(ns, 1)
	cluster.MustCreate(t, job)
	started := waitMPIJob(t, job, "to run", running)
	if got := ptr.Deref(started.Spec.RunPolicy.CleanPodPolicy, ""); got != mpiv2.CleanPodPolicyRunning {
		t.Fatalf("started with clean-pod policy %q, want Running", got)
	}
	started.Spec.RunPolicy.CleanPodPolicy = nil
	if err := cluster.Client.Update(context.Background(), started); err != nil {
		t.Fatal(err)
	}
	if got := ptr.Deref(started.Spec.RunPolicy.CleanPodPolicy, ""); got != mpiv2.CleanPodPolicyRunning {
		t.Errorf("a running MPIJob's policy unset became %q, want Running kept", got)
	}
	started.Spec.RunPolicy.CleanPodPolicy = ptr.To(mpiv2.CleanPodPolicyNone)
	if err := cluster.Client.Update(context.Background(), started); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.runPolicy.cleanPodPolicy") {
		t.Errorf("a running MPIJob's policy set to None: got %v, want refused naming the field", err)
	}

	all := newMPIJob(ns, 1)
	all.Spec.RunPolicy.CleanPodPolicy = ptr.To(mpiv2.CleanPodPolicyAll)
	cluster.MustCreate(t, all)
	if got := ptr.Deref(waitMPIJob(t, all, "to run", running).Spec.RunPolicy.CleanPodPolicy, ""); got != mpiv2.CleanPodPolicyAll {
		t.Errorf("started with clean-pod policy %q, want the user's All", got)
	}
}

// A running MPIJob can't move to another queue, nor be made to look
// unqueued: its queue-name changes only while it is suspended.
func TestQueueOfARunningMPIJobIsKept(t *testing.T) {
	ns, _ := newQueue(t, "3")
	job := newMPIJob(ns, 2)
	cluster.MustCreate(t, job)
	started := waitMPIJob(t, job, "to run", running)
	for name, mutate := range map[string]func(*mpiv2.MPIJob){
		"moved":    func(j *mpiv2.MPIJob) { j.Labels[kueue.QueueNameLabel] = "elsewhere" },
		"unqueued": func(j *mpiv2.MPIJob) { delete(j.Labels, kueue.QueueNameLabel) },
	} {
		changed := started.DeepCopy()
		mutate(changed)
		err := cluster.Client.Update(context.Background(), changed)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "metadata.labels[kueue.x-k8s.io/queue-name]") {
			t.Errorf("%s: got %v, want refused naming the label", name, err)
		}
	}
}

// Only the launcher the MPI operator makes is an MPIJob's: a Job named
// otherwise, or named like it but larger, is queued as if it had no owner.
func TestOnlyTheLauncherTheOperatorMakesIsLeftToAnMPIJob(t *testing.T) {
	ns, _ := newQueue(t, "8")
	launcherOf := func(mpi *mpiv2.MPIJob, name string, parallelism int32) *batchv1.Job {
		j := framework.Job(ns, name, "lq", parallelism, "1")
		j.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(mpi, mpiv2.SchemeGroupVersionKind)}
		return j
	}
	first, second := newMPIJob(ns, 2), newMPIJob(ns, 2)
	cluster.MustCreate(t, first, second)
	made := launcherOf(first, first.Name+"-launcher", 1)
	cluster.MustCreate(t, made)
	if ptr.Deref(made.Spec.Suspend, false) {
		t.Fatal("the launcher the operator makes was suspended: its MPIJob's Workload counts it")
	}
	cluster.NoWorkloadOf(t, made, "lq")
	for what, forged := range map[string]*batchv1.Job{
		"a Job named otherwise": launcherOf(first, cluster.Unique("launcher"), 1),
		"a larger launcher":     launcherOf(second, second.Name+"-launcher", 3),
	} {
		cluster.MustCreate(t, forged)
		if !ptr.Deref(forged.Spec.Suspend, false) {
			t.Errorf("%s naming the MPIJob as its controller ran as the MPIJob's, outside its queue", what)
		}
	}
}
