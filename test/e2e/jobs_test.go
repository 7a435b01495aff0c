package e2e

import (
	"context"
	"fmt"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// e2eQueue creates a namespace with LocalQueue "lq" in front of a
// ClusterQueue of its own (no cohort) with cpu quota in one flavor of the
// sample (on-demand or spot).
func e2eQueue(t *testing.T, c client.Client, name, flavor, cpu string) {
	t.Helper()
	e2eQueueOf(t, c, name, flavor, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)})
}

// e2eQueueOf is e2eQueue with quota for each resource of quotas.
func e2eQueueOf(t *testing.T, c client.Client, name, flavor string, quotas corev1.ResourceList) {
	t.Helper()
	var covered []corev1.ResourceName
	var resources []kueue.ResourceQuota
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := quotas[r]; ok {
			covered = append(covered, r)
			resources = append(resources, kueue.ResourceQuota{Name: r, NominalQuota: q})
		}
	}
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}},
		&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kueue.ClusterQueueSpec{
			NamespaceSelector: &metav1.LabelSelector{},
			ResourceGroups: []kueue.ResourceGroup{{CoveredResources: covered,
				Flavors: []kueue.FlavorQuotas{{Name: kueue.ResourceFlavorReference(flavor), Resources: resources}}}},
		}},
		&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "lq"}, Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(name)}},
	}
	for _, o := range objs {
		if err := c.Create(t.Context(), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

// queuedJob is a Job in LocalQueue lq of pods pods of 1 CPU, each running
// for runFor on the simulated nodes.
func queuedJob(ns, name string, pods int32, runFor string) *batchv1.Job {
	tmpl := podTemplate(nil, runFor)
	tmpl.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{kueue.QueueNameLabel: "lq"}},
		Spec:       batchv1.JobSpec{Parallelism: ptr.To(pods), Completions: ptr.To(pods), Template: tmpl},
	}
}

func jobFailed(j *batchv1.Job) (bool, string) {
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			return true, c.Message
		}
	}
	return false, ""
}

// Five Jobs of two 1-CPU pods in a 4-CPU queue: two run, three wait; as
// each completes the next starts; all complete; the queue ends empty.
func TestQueuedJobsRunInTurn(t *testing.T) {
	c := sharedClient(t)
	e2eQueue(t, c, "e2e-turns", "on-demand", "4")
	var jobs []*batchv1.Job
	for i := range 5 {
		j := queuedJob("e2e-turns", fmt.Sprintf("turn-%d", i), 2, "3s")
		if err := c.Create(t.Context(), j); err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, j)
	}
	// Watch the whole run: never more than two Jobs started and not yet
	// successful.
	maxRunning, sawWaiting := 0, false
	eventually(t, "all five Jobs to complete", func(ctx context.Context) (bool, error) {
		// One List is one consistent snapshot of all five.
		list := &batchv1.JobList{}
		if err := c.List(ctx, list, client.InNamespace("e2e-turns")); err != nil {
			return false, err
		}
		runningNow, complete, waiting := 0, 0, 0
		for i := range list.Items {
			j := &list.Items[i]
			if failed, msg := jobFailed(j); failed {
				t.Fatalf("Job %s failed: %s", j.Name, msg)
			}
			switch {
			case hasCondition(j.Status.Conditions, batchv1.JobComplete):
				complete++
			case hasCondition(j.Status.Conditions, batchv1.JobSuccessCriteriaMet):
				// Done; its pods are terminating and its quota is already free.
			case ptr.Deref(j.Spec.Suspend, false):
				waiting++
			default:
				runningNow++
			}
		}
		maxRunning = max(maxRunning, runningNow)
		sawWaiting = sawWaiting || (runningNow == 2 && waiting == 3)
		return complete == len(jobs), nil
	})
	if maxRunning > 2 {
		t.Errorf("saw %d Jobs running at once in 4 CPU of 2-CPU Jobs", maxRunning)
	}
	if !sawWaiting {
		t.Error("never saw two Jobs running while three waited")
	}
	eventually(t, "the ClusterQueue to end with zero usage", func(ctx context.Context) (bool, error) {
		return queueIsEmpty(ctx, c, "e2e-turns")
	})
}

// A Job admitted to the tainted spot flavor runs with the injected
// toleration and nodeSelector, on spot nodes.
func TestJobRunsOnItsTaintedFlavor(t *testing.T) {
	c := sharedClient(t)
	e2eQueue(t, c, "e2e-spot", "spot", "4")
	j := queuedJob("e2e-spot", "on-spot", 2, "")
	if err := c.Create(t.Context(), j); err != nil {
		t.Fatal(err)
	}
	var pods corev1.PodList
	eventually(t, "the Job's two pods Running", func(ctx context.Context) (bool, error) {
		if err := c.List(ctx, &pods, client.InNamespace("e2e-spot"), client.MatchingLabels{"batch.kubernetes.io/job-name": "on-spot"}); err != nil {
			return false, err
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return running == 2, nil
	})
	for _, p := range pods.Items {
		node := &corev1.Node{}
		if err := c.Get(t.Context(), client.ObjectKey{Name: p.Spec.NodeName}, node); err != nil {
			t.Fatal(err)
		}
		if node.Labels["instance-type"] != "spot" {
			t.Errorf("pod %s runs on %s (instance-type=%s), want a spot node", p.Name, node.Name, node.Labels["instance-type"])
		}
		if p.Spec.NodeSelector["instance-type"] != "spot" {
			t.Errorf("pod %s nodeSelector %v, want instance-type=spot injected", p.Name, p.Spec.NodeSelector)
		}
		tolerated := false
		for _, tol := range p.Spec.Tolerations {
			tolerated = tolerated || (tol.Key == "spot" && tol.Value == "true")
		}
		if !tolerated {
			t.Errorf("pod %s tolerations %v lack the flavor's spot=true", p.Name, p.Spec.Tolerations)
		}
	}
	if err := c.Delete(t.Context(), j, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
}

// An Indexed Job with backoffLimitPerIndex whose index 1 fails finishes
// Failed as Kubernetes decides (the other index succeeds), and its quota is
// freed.
func TestIndexedJobWithAFailingIndexFreesItsQuota(t *testing.T) {
	c := sharedClient(t)
	e2eQueue(t, c, "e2e-indexed", "on-demand", "2")
	j := queuedJob("e2e-indexed", "indexed", 2, "2s")
	j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	j.Spec.BackoffLimitPerIndex = ptr.To(int32(0))
	j.Spec.Template.Annotations["sluice.dev/fail-index"] = "1"
	if err := c.Create(t.Context(), j); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Job to fail on its index", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(j), j); err != nil {
			return false, err
		}
		failed, _ := jobFailed(j)
		return failed, nil
	})
	if j.Status.Succeeded != 1 || ptr.Deref(j.Status.FailedIndexes, "") != "1" {
		t.Errorf("succeeded %d, failedIndexes %q; want index 0 done and index 1 failed", j.Status.Succeeded, ptr.Deref(j.Status.FailedIndexes, ""))
	}
	eventually(t, "the Workload to finish Failed and the queue to be empty", func(ctx context.Context) (bool, error) {
		list := &kueue.WorkloadList{}
		if err := c.List(ctx, list, client.InNamespace("e2e-indexed")); err != nil {
			return false, err
		}
		if len(list.Items) != 1 {
			return false, nil
		}
		finished := meta.FindStatusCondition(list.Items[0].Status.Conditions, kueue.WorkloadFinished)
		if finished == nil || finished.Status != metav1.ConditionTrue || finished.Reason != "Failed" {
			return false, nil
		}
		return queueIsEmpty(ctx, c, "e2e-indexed")
	})
}

// queueIsEmpty tells whether a ClusterQueue reports no reservations and
// zero usage.
func queueIsEmpty(ctx context.Context, c client.Client, name string) (bool, error) {
	cq := &kueue.ClusterQueue{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, cq); err != nil {
		return false, err
	}
	for _, fu := range cq.Status.FlavorsUsage {
		for _, r := range fu.Resources {
			if !r.Total.IsZero() {
				return false, nil
			}
		}
	}
	return cq.Status.ReservingWorkloads == 0, nil
}
