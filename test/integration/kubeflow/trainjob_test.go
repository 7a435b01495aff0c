package kubeflow

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// startedTrainJob is a TrainJob of two 1-CPU nodes in a queue of cpu,
// admitted and started, with its JobSet running as the trainer builds it.
func startedTrainJob(t *testing.T, cpu string) (job *unstructured.Unstructured, wl *kueue.Workload, flavor string) {
	t.Helper()
	ns, flavor := newQueue(t, cpu)
	job = newTrainJob(ns)
	cluster.MustCreate(t, job)
	trainerBuilds(t, job, runtime{nodes: 2, cpu: "1"})
	wl = cluster.WaitWorkload(t, trainJobWorkload(job), "to be admitted", framework.Admitted)
	waitTrainJob(t, job, "to be started", trainJobRuns)
	js := trainerBuilds(t, job, runtime{nodes: 2, cpu: "1"})
	if ptr.Deref(js.Spec.Suspend, false) {
		t.Fatal("the JobSet of an admitted TrainJob, built with its admission, was kept suspended")
	}
	return job, wl, flavor
}

func TestTrainJobIsQueuedThroughTheJobSetTheTrainerBuilds(t *testing.T) {
	job, wl, flavor := startedTrainJob(t, "3")
	if len(wl.Spec.PodSets) != 1 || wl.Spec.PodSets[0].Name != "node" || wl.Spec.PodSets[0].Count != 2 {
		t.Fatalf("pod sets %+v, want the JobSet's node=2", wl.Spec.PodSets)
	}
	js := &jobsetapi.JobSet{}
	if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(job), js); err != nil {
		t.Fatal(err)
	}
	tmpl := js.Spec.ReplicatedJobs[0].Template.Spec.Template
	if tmpl.Spec.NodeSelector["pool"] != flavor || tmpl.Labels[kueue.PodSetLabel] != "node" {
		t.Errorf("the JobSet runs with nodeSelector %v and labels %v: sluice's runtime patch did not reach it", tmpl.Spec.NodeSelector, tmpl.Labels)
	}
	setTrainJobStatus(t, job, map[string]any{"conditions": []any{map[string]any{
		"type": "Complete", "status": "True", "reason": "JobsCompleted", "message": "trained", "lastTransitionTime": "2026-12-05T00:00:00Z"}}})
	cluster.WaitWorkload(t, wl, "to finish", framework.ConditionIs(kueue.WorkloadFinished, metav1.ConditionTrue, integration.FinishedReasonSucceeded, "trained"))
}

func TestTrainJobWaitsSuspendedUntilItFits(t *testing.T) {
	ns, _ := newQueue(t, "2")
	job := newTrainJob(ns)
	cluster.MustCreate(t, job)
	if !trainJobSuspended(job) {
		t.Fatal("the webhook did not create the queued TrainJob suspended")
	}
	trainerBuilds(t, job, runtime{nodes: 4, cpu: "1"})
	wl := cluster.WaitWorkload(t, trainJobWorkload(job), "to exist", func(*kueue.Workload) error { return nil })
	cluster.WaitPending(t, wl, kueue.ReasonExceedsMaxQuota)
	// The tenant unsuspends the TrainJob, then its JobSet: both come back
	// suspended.
	framework.Update(t, cluster.Client, job, func() { _ = unstructured.SetNestedField(job.Object, false, "spec", "suspend") })
	if !trainJobSuspended(job) {
		t.Error("a waiting TrainJob unsuspended by hand was not kept suspended")
	}
	js := &jobsetapi.JobSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: job.GetName()}}
	framework.Update(t, cluster.Client, js, func() { js.Spec.Suspend = ptr.To(false) })
	if !ptr.Deref(js.Spec.Suspend, false) {
		t.Error("the JobSet of a waiting TrainJob, unsuspended by hand, ran")
	}
}

// The trainer rebuilds the JobSet from the runtime when the TrainJob
// starts: a runtime that grew after admission must not run beyond it. The
// JobSet stays suspended in that very write, and the TrainJob queues again
// at its new size.
func TestTrainJobWhoseRuntimeGrewAfterAdmissionDoesNotRunBeyondIt(t *testing.T) {
	ns, _ := newQueue(t, "3")
	job := newTrainJob(ns)
	cluster.MustCreate(t, job)
	trainerBuilds(t, job, runtime{nodes: 2, cpu: "1"})
	wl := cluster.WaitWorkload(t, trainJobWorkload(job), "to be admitted", framework.Admitted)
	waitTrainJob(t, job, "to be started", trainJobRuns)
	js := trainerBuilds(t, job, runtime{nodes: 3, cpu: "1"})
	if !ptr.Deref(js.Spec.Suspend, false) {
		t.Fatal("the JobSet rebuilt with 3 nodes for an admission of 2 ran")
	}
	cluster.WaitWorkload(t, wl, "to be evicted as changed", framework.ConditionIs(kueue.WorkloadEvicted, metav1.ConditionTrue, integration.EvictedReasonJobChanged))
	waitTrainJob(t, job, "to be stopped and its admission taken out", func(u *unstructured.Unstructured) error {
		if !trainJobSuspended(u) || injectsAdmission(u) {
			return fmt.Errorf("suspended %v, admission injected %v", trainJobSuspended(u), injectsAdmission(u))
		}
		return nil
	})
	trainerBuilds(t, job, runtime{nodes: 3, cpu: "1"})
	cluster.WaitWorkload(t, wl, "to queue again with 3 nodes", func(wl *kueue.Workload) error {
		if len(wl.Spec.PodSets) != 1 || wl.Spec.PodSets[0].Count != 3 {
			return fmt.Errorf("pod sets %+v", wl.Spec.PodSets)
		}
		return framework.Admitted(wl)
	})
}

// An evicted TrainJob is suspended; once the trainer suspended its JobSet,
// the admission comes out of sluice's runtime patch and the quota is given
// back.
func TestEvictedTrainJobIsSuspendedAndItsAdmissionTakenOut(t *testing.T) {
	job, wl, _ := startedTrainJob(t, "3")
	framework.Update(t, cluster.Client, wl, func() { wl.Spec.Active = ptr.To(false) })
	waitTrainJob(t, job, "to be suspended", func(u *unstructured.Unstructured) error {
		if !trainJobSuspended(u) {
			return fmt.Errorf("running")
		}
		return nil
	})
	// Its JobSet still runs: the quota stays held, the admission stays in.
	current := cluster.WaitWorkload(t, wl, "to be evicted", framework.ConditionIs(kueue.WorkloadEvicted, metav1.ConditionTrue, ""))
	if current.Status.Admission == nil {
		t.Fatal("the quota was given back while the TrainJob's JobSet runs")
	}
	trainerBuilds(t, job, runtime{nodes: 2, cpu: "1"})
	cluster.WaitWorkload(t, wl, "to give its quota back", func(wl *kueue.Workload) error {
		if wl.Status.Admission != nil {
			return fmt.Errorf("still admitted")
		}
		return nil
	})
	stopped := waitTrainJob(t, job, "to have the admission taken out of sluice's patch", func(u *unstructured.Unstructured) error {
		if injectsAdmission(u) {
			return fmt.Errorf("sluice's patch still injects the admission")
		}
		return nil
	})
	if _, ok := stopped.GetAnnotations()[integration.OriginalPodSetsAnnotation]; ok {
		t.Error("the originals annotation stayed after the restore")
	}
}

// Only the JobSet named like a queued TrainJob is counted by its Workload:
// another one naming the TrainJob as its controller never runs, and what
// the TrainJob's JobSet makes is its own, not queued one by one.
func TestWhatATrainJobRunsAsIsTheOnlyJobSetItCounts(t *testing.T) {
	job, _, _ := startedTrainJob(t, "3")
	trainJob := job.DeepCopy()
	if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(job), trainJob); err != nil {
		t.Fatal(err)
	}
	forged := &jobsetapi.JobSet{ObjectMeta: metav1.ObjectMeta{Namespace: job.GetNamespace(), Name: cluster.Unique("extra"),
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(trainJob, trainJob.GroupVersionKind())}},
		Spec: jobsetapi.JobSetSpec{Suspend: ptr.To(false), ReplicatedJobs: []jobsetapi.ReplicatedJob{{Name: "node", Replicas: 1,
			Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "node", Image: "pytorch"}}}}}}}}}}
	cluster.MustCreate(t, forged)
	if !ptr.Deref(forged.Spec.Suspend, false) {
		t.Error("a second JobSet claiming a running TrainJob as its controller was created running")
	}

	js := &jobsetapi.JobSet{}
	if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(job), js); err != nil {
		t.Fatal(err)
	}
	child := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: js.Namespace, Name: js.Name + "-node-0",
		Labels:          map[string]string{kueue.QueueNameLabel: "lq"},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(js, jobsetapi.SchemeGroupVersion.WithKind("JobSet"))}},
		Spec: js.Spec.ReplicatedJobs[0].Template.Spec}
	cluster.MustCreate(t, child)
	if ptr.Deref(child.Spec.Suspend, false) {
		t.Error("the webhook suspended a Job of a running TrainJob's JobSet: the TrainJob's Workload counts it")
	}
	cluster.NoWorkloadOf(t, child, "lq")
}

// A Pod naming a queued TrainJob's JobSet as its controller is not the
// TrainJob's: a JobSet makes Jobs, not Pods, so the TrainJob's Workload
// never counted it, and it is queued (JobSet's own integration is off
// here: the owner walk passes through the JobSet).
func TestPodClaimingATrainJobsJobSetIsQueued(t *testing.T) {
	job, _, _ := startedTrainJob(t, "3")
	js := &jobsetapi.JobSet{}
	if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(job), js); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: js.Namespace, Name: cluster.Unique("pod"),
		Labels:          map[string]string{kueue.QueueNameLabel: "lq"},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(js, jobsetapi.SchemeGroupVersion.WithKind("JobSet"))}},
		Spec: js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec}
	cluster.MustCreate(t, pod)
	if pod.Labels[kueue.ManagedLabel] != "true" || len(pod.Spec.SchedulingGates) == 0 {
		t.Errorf("a Pod naming a TrainJob's JobSet as its controller ran unqueued: labels %v, gates %v", pod.Labels, pod.Spec.SchedulingGates)
	}
}

// A Job of a queued TrainJob's JobSet that opts in with standalone is
// counted by the TrainJob's Workload, two levels up: it is not queued
// again, and the warning names the TrainJob.
func TestStandaloneJobUnderAQueuedTrainJobIsIgnored(t *testing.T) {
	job, _, _ := startedTrainJob(t, "3")
	js := &jobsetapi.JobSet{}
	if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(job), js); err != nil {
		t.Fatal(err)
	}
	child := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: js.Namespace, Name: js.Name + "-node-0",
		Labels:          map[string]string{kueue.QueueNameLabel: "lq"},
		Annotations:     map[string]string{kueue.StandaloneAnnotation: "true"},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(js, jobsetapi.SchemeGroupVersion.WithKind("JobSet"))}},
		Spec: js.Spec.ReplicatedJobs[0].Template.Spec}
	warnings := cluster.CreateWithWarnings(t, child)
	if ptr.Deref(child.Spec.Suspend, false) {
		t.Fatal("a standalone Job of a queued TrainJob's JobSet was suspended: the TrainJob's Workload counts it")
	}
	cluster.NoWorkloadOf(t, child, "lq")
	if !slices.ContainsFunc(warnings, func(w string) bool {
		return strings.HasPrefix(w, integration.EventStandaloneUnderQueuedParent) && strings.Contains(w, "TrainJob "+job.GetName())
	}) {
		t.Errorf("warnings %q, want %s naming TrainJob %s", warnings, integration.EventStandaloneUnderQueuedParent, job.GetName())
	}
}

// A TrainJob deleted with orphan propagation leaves its JobSet running:
// its quota stays held until the JobSet's pods are gone.
func TestDeletedTrainJobHoldsItsQuotaUntilItsPodsAreGone(t *testing.T) {
	job, _, _ := startedTrainJob(t, "3")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: job.GetNamespace(), Name: cluster.Unique("pod"),
		Labels: map[string]string{jobsetapi.JobSetNameKey: job.GetName()}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "node", Image: "pytorch"}}}}
	cluster.MustCreate(t, pod)
	pod.Status.Phase = corev1.PodRunning
	if err := cluster.Client.Status().Update(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Client.Delete(context.Background(), job, client.PropagationPolicy(metav1.DeletePropagationOrphan)); err != nil {
		t.Fatal(err)
	}
	next := newTrainJob(job.GetNamespace())
	cluster.MustCreate(t, next)
	trainerBuilds(t, next, runtime{nodes: 2, cpu: "1"})
	nextWl := cluster.WaitWorkload(t, trainJobWorkload(next), "to wait for the orphaned pod's quota", func(wl *kueue.Workload) error {
		if wl.Status.Admission != nil {
			return fmt.Errorf("admitted while the deleted TrainJob's pod runs")
		}
		if !meta.IsStatusConditionFalse(wl.Status.Conditions, kueue.WorkloadQuotaReserved) {
			return fmt.Errorf("not looked at yet")
		}
		return nil
	})
	if err := cluster.Client.Delete(context.Background(), pod, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	cluster.WaitWorkload(t, nextWl, "to be admitted once the pod is gone", framework.Admitted)
}

func TestTrainJobWebhookKeepsItsQueue(t *testing.T) {
	job, _, _ := startedTrainJob(t, "3")
	for name, mutate := range map[string]func(*unstructured.Unstructured){
		"moved": func(u *unstructured.Unstructured) { setLabel(u, kueue.QueueNameLabel, "elsewhere") },
		"unqueued": func(u *unstructured.Unstructured) {
			unstructured.RemoveNestedField(u.Object, "metadata", "labels", kueue.QueueNameLabel)
		},
		"malformed": func(u *unstructured.Unstructured) { setLabel(u, kueue.QueueNameLabel, "Not_A_Queue") },
	} {
		changed := job.DeepCopy()
		if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(job), changed); err != nil {
			t.Fatal(err)
		}
		mutate(changed)
		err := cluster.Client.Update(context.Background(), changed)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "metadata.labels[kueue.x-k8s.io/queue-name]") {
			t.Errorf("%s: got %v, want refused naming the label", name, err)
		}
	}
}

func setLabel(u *unstructured.Unstructured, key, value string) {
	labels := u.GetLabels()
	labels[key] = value
	u.SetLabels(labels)
}
