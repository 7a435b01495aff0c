package jobset

import (
	"context"
	"fmt"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
	"github.com/sluicehq/sluice/internal/integration/jobset"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// newQueue is a namespace with LocalQueue "lq" in front of its own
// ClusterQueue of cpu in one flavor (nodes labelled pool=<flavor>).
func newQueue(t *testing.T, cpu string) (string, string) {
	t.Helper()
	return cluster.NewQueue(t, "jobset", cpu)
}

// replicated is a replicated Job of replicas Jobs, each of parallelism
// pods of 1 CPU.
func replicated(name string, replicas, parallelism int32) jobsetapi.ReplicatedJob {
	return jobsetapi.ReplicatedJob{Name: name, Replicas: replicas, Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
		Parallelism: ptr.To(parallelism), Completions: ptr.To(parallelism),
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "main", Image: "busybox",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}},
		}},
	}}}
}

// newJobSet is a JobSet in LocalQueue lq (none when empty) with a leader
// (1 pod) and workers (2 Jobs of 2 pods): 5 CPU in all.
func newJobSet(ns, lq string) *jobsetapi.JobSet {
	js := &jobsetapi.JobSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster.Unique("js")}, Spec: jobsetapi.JobSetSpec{
		ReplicatedJobs: []jobsetapi.ReplicatedJob{replicated("leader", 1, 1), replicated("workers", 2, 2)},
	}}
	if lq != "" {
		js.Labels = map[string]string{kueue.QueueNameLabel: lq}
	}
	return js
}

// workloadOf is the Workload of a JobSet, named as the contract says.
func workloadOf(js *jobsetapi.JobSet) *kueue.Workload {
	return &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: js.Namespace, Name: integration.WorkloadName(jobset.Kind.GVK, js.Name, js.UID)}}
}

func waitWorkload(t *testing.T, js *jobsetapi.JobSet, what string, cond func(*kueue.Workload) error) *kueue.Workload {
	t.Helper()
	return cluster.WaitWorkload(t, workloadOf(js), what, cond)
}

func waitJobSet(t *testing.T, js *jobsetapi.JobSet, what string, cond func(*jobsetapi.JobSet) error) *jobsetapi.JobSet {
	t.Helper()
	return framework.WaitFor(t, cluster.Client, js, what, cond)
}

func running(js *jobsetapi.JobSet) error { return framework.Running(js.Spec.Suspend) }

func suspended(js *jobsetapi.JobSet) error { return framework.Suspended(js.Spec.Suspend) }

// setStatus writes the JobSet's status as its controller would.
func setStatus(t *testing.T, js *jobsetapi.JobSet, mutate func(*jobsetapi.JobSet)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		current := &jobsetapi.JobSet{}
		if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(js), current); err != nil {
			return err
		}
		mutate(current)
		return cluster.Client.Status().Update(context.Background(), current)
	})
	if err != nil {
		t.Fatalf("writing the status of JobSet %s: %v", js.Name, err)
	}
}

// childJob is a Job the JobSet controller would create for a replicated
// Job: controlled by the JobSet, labelled with its UID.
func childJob(js *jobsetapi.JobSet, rj string, index int) *batchv1.Job {
	var tmpl batchv1.JobTemplateSpec
	for _, r := range js.Spec.ReplicatedJobs {
		if r.Name == rj {
			tmpl = *r.Template.DeepCopy()
		}
	}
	j := &batchv1.Job{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec}
	j.Namespace, j.Name = js.Namespace, fmt.Sprintf("%s-%s-%d", js.Name, rj, index)
	if j.Labels == nil {
		j.Labels = map[string]string{}
	}
	j.Labels[jobsetapi.JobSetUIDKey] = string(js.UID)
	j.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(js, jobsetapi.SchemeGroupVersion.WithKind("JobSet"))}
	j.Spec.Suspend = js.Spec.Suspend
	return j
}
