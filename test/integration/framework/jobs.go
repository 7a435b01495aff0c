package framework

import (
	"context"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
	"github.com/sluicehq/sluice/internal/integration/job"
)

// Job is a batch Job of parallelism pods of cpu each in LocalQueue lq
// (none when lq is empty), not suspended: the webhook suspends it.
func Job(ns, name, lq string, parallelism int32, cpu string) *batchv1.Job {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: batchv1.JobSpec{
		Parallelism: ptr.To(parallelism),
		Completions: ptr.To(parallelism),
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "main", Image: "busybox",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}},
		}},
	}}
	if lq != "" {
		j.Labels = map[string]string{kueue.QueueNameLabel: lq}
	}
	return j
}

// SetJobStatus writes a Job's status as the Job controller would (there is
// none on the test clusters).
func (c *Cluster) SetJobStatus(t testing.TB, j *batchv1.Job, mutate func(*batchv1.Job)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		current := &batchv1.Job{}
		if err := c.Client.Get(context.Background(), client.ObjectKeyFromObject(j), current); err != nil {
			return err
		}
		mutate(current)
		return c.Client.Status().Update(context.Background(), current)
	})
	if err != nil {
		t.Fatalf("writing the status of Job %s: %v", j.Name, err)
	}
}

// JobWorkload is the Workload of a created Job, named as the contract
// says.
func JobWorkload(j *batchv1.Job) *kueue.Workload {
	return &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: j.Namespace,
		Name: integration.WorkloadName(job.Kind.GVK, j.Name, j.UID)}}
}

// NoWorkloadOf fails the test if a Workload is controlled by obj. A Job
// created after obj in its namespace (in LocalQueue lq) is seen by the
// manager after it: once that Job's Workload exists, obj's would.
func (c *Cluster) NoWorkloadOf(t testing.TB, obj client.Object, lq string) {
	t.Helper()
	marker := Job(obj.GetNamespace(), c.Unique("marker"), lq, 1, "1")
	c.MustCreate(t, marker)
	c.WaitWorkload(t, JobWorkload(marker), "to exist", func(*kueue.Workload) error { return nil })
	list := &kueue.WorkloadList{}
	if err := c.Client.List(context.Background(), list, client.InNamespace(obj.GetNamespace())); err != nil {
		t.Fatal(err)
	}
	for _, wl := range list.Items {
		if owner := metav1.GetControllerOf(&wl); owner != nil && owner.UID == obj.GetUID() {
			t.Fatalf("Workload %s was created for %s", wl.Name, obj.GetName())
		}
	}
}

// ExpectGrownChildQueued grows a running Job that a queued parent made
// (an Indexed one: its parallelism and completions together) to pods, past
// what the parent's Workload counts, and checks that the growing update
// comes back suspended and that the Job is then queued on its own.
func (c *Cluster) ExpectGrownChildQueued(t testing.TB, j *batchv1.Job, pods int32) {
	t.Helper()
	Update(t, c.Client, j, func() { j.Spec.Parallelism, j.Spec.Completions = ptr.To(pods), ptr.To(pods) })
	if !ptr.Deref(j.Spec.Suspend, false) {
		t.Fatalf("Job %s, grown past what its parent counts, kept running as its parent's", j.Name)
	}
	c.WaitWorkload(t, JobWorkload(j), "to queue the grown Job on its own", func(*kueue.Workload) error { return nil })
}
