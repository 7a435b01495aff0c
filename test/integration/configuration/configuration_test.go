package configuration

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
	"github.com/sluicehq/sluice/internal/integration/job"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// queue is a namespace with LocalQueue "lq" in front of a ClusterQueue of
// its own that covers cpu and the transformed GPU memory.
func queue(t *testing.T, cpu, memory string) string {
	t.Helper()
	ns := cluster.Namespace(t, nil)
	rf, cq := cluster.Unique("rf"), cluster.Unique("cq")
	cluster.MustCreate(t, framework.Flavor(rf, nil), &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: cq}, Spec: kueue.ClusterQueueSpec{
		NamespaceSelector: &metav1.LabelSelector{},
		ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU, gpuMemory},
			Flavors: []kueue.FlavorQuotas{{Name: kueue.ResourceFlavorReference(rf), Resources: []kueue.ResourceQuota{
				{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse(cpu)},
				{Name: gpuMemory, NominalQuota: resource.MustParse(memory)}}}}}},
	}}, framework.LocalQueue(ns, "lq", cq))
	return ns
}

func jobWith(ns string, labels map[string]string, parallelism int32, requests corev1.ResourceList) *batchv1.Job {
	l := map[string]string{kueue.QueueNameLabel: "lq"}
	maps.Copy(l, labels)
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster.Unique("job"), Labels: l}, Spec: batchv1.JobSpec{
		Parallelism: ptr.To(parallelism), Completions: ptr.To(parallelism),
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "main", Image: "busybox", Resources: corev1.ResourceRequirements{Requests: requests, Limits: extended(requests)}}}}},
	}}
}

// extended are the requests of extended resources, which Kubernetes wants
// as limits too.
func extended(requests corev1.ResourceList) corev1.ResourceList {
	limits := corev1.ResourceList{}
	for name, q := range requests {
		if strings.Contains(string(name), "/") {
			limits[name] = q
		}
	}
	return limits
}

// workloadOf waits for the Workload of a Job and returns it.
func workloadOf(t *testing.T, j *batchv1.Job) *kueue.Workload {
	t.Helper()
	wl := &kueue.Workload{}
	framework.Eventually(t, "the Workload of "+j.Name, func(ctx context.Context) (bool, error) {
		current := &batchv1.Job{}
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(j), current); err != nil {
			return false, err
		}
		key := client.ObjectKey{Namespace: j.Namespace, Name: integration.WorkloadName(job.Kind.GVK, j.Name, current.UID)}
		return true, cluster.Client.Get(ctx, key, wl)
	})
	return wl
}

func TestJobLabelsAreCopiedToTheWorkload(t *testing.T) {
	ns := queue(t, "4", "0")
	j := jobWith(ns, map[string]string{"team": "ml", "example.com/cost-center": "42", "other": "x", kueue.JobUIDLabel: "forged"}, 1,
		corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")})
	cluster.MustCreate(t, j)
	wl := workloadOf(t, j)
	if wl.Labels["team"] != "ml" || wl.Labels["example.com/cost-center"] != "42" {
		t.Errorf("labels to copy missing: %v", wl.Labels)
	}
	if _, copied := wl.Labels["other"]; copied {
		t.Errorf("a label not listed was copied: %v", wl.Labels)
	}
	if wl.Labels[kueue.JobUIDLabel] == "forged" {
		t.Errorf("the job's label overwrote sluice's own %s", kueue.JobUIDLabel)
	}
}

// A MIG slice counts as 5 units of GPU memory instead of itself (Replace),
// so two of them fill a queue of 10 and a third waits; a resource with an
// excluded prefix counts for nothing, though no ClusterQueue covers it.
func TestResourcesAreTransformedAndExcluded(t *testing.T) {
	ns := queue(t, "10", "10")
	two := jobWith(ns, nil, 2, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), mig: resource.MustParse("1"), excluded: resource.MustParse("3")})
	one := jobWith(ns, nil, 1, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), mig: resource.MustParse("1")})
	cluster.MustCreate(t, two)
	wl := workloadOf(t, two)
	cluster.WaitAdmitted(t, wl)
	usage := wl.Status.Admission.PodSetAssignments[0].ResourceUsage
	if q := usage[gpuMemory]; q.Cmp(resource.MustParse("10")) != 0 {
		t.Errorf("gpu memory used = %s, want 10 (2 pods x 1 slice x 5)", q.String())
	}
	for _, name := range []corev1.ResourceName{mig, excluded} {
		if q, ok := usage[name]; ok {
			t.Errorf("%s counted (%s): replaced or excluded resources must not", name, q.String())
		}
	}
	cluster.MustCreate(t, one)
	cluster.WaitPending(t, workloadOf(t, one), kueue.ReasonWaitingForQuota)
}

func TestFinishedWorkloadsAreDeleted(t *testing.T) {
	ns := queue(t, "4", "0")
	wl := framework.Workload(ns, "done", "lq", 0, 1, "1")
	cluster.MustCreate(t, wl)
	cluster.WaitAdmitted(t, wl)
	framework.Eventually(t, "the workload to be marked finished", func(ctx context.Context) (bool, error) {
		current := &kueue.Workload{}
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(wl), current); err != nil {
			return false, err
		}
		meta.SetStatusCondition(&current.Status.Conditions, metav1.Condition{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue,
			Reason: "Succeeded", Message: "done"})
		return true, cluster.Client.Status().Update(ctx, current)
	})
	waitGone(t, wl)
}

// A Job that ran past its maximum execution time is deactivated by sluice,
// and with afterDeactivatedByKueue: 0s deleted (its Workload with it, by
// the garbage collector, which this test cluster does not run).
func TestJobsDeactivatedBySluiceAreDeleted(t *testing.T) {
	ns := queue(t, "4", "0")
	j := jobWith(ns, map[string]string{kueue.MaxExecTimeSecondsLabel: "1"}, 1, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")})
	cluster.MustCreate(t, j)
	wl := workloadOf(t, j)
	waitGone(t, j)
	current := &kueue.Workload{}
	if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(wl), current); err == nil {
		if c := meta.FindStatusCondition(current.Status.Conditions, kueue.WorkloadEvicted); c == nil || c.Reason != kueue.EvictedByMaximumExecutionTime {
			t.Errorf("the job went without its workload being evicted for its execution time: %v", current.Status.Conditions)
		}
	}
}

func waitGone(t *testing.T, obj client.Object) {
	t.Helper()
	framework.Eventually(t, fmt.Sprintf("%s to be deleted", obj.GetName()), func(ctx context.Context) (bool, error) {
		err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object))
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}
