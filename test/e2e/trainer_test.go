package e2e

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// The Kubeflow trainer (v2.2, --with trainer) runs TrainJobs as JobSets,
// which the JobSet controller runs: sluice queues each TrainJob with the
// pod sets of the JobSet the trainer built for it.

var trainerGroup = "trainer.kubeflow.org"

// trainingRuntime is a namespaced TrainingRuntime of one "node" replicated
// Job whose pods run for runFor, as the trainer's torch runtimes are made.
func trainingRuntime(ns, name, runFor string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"namespace": ns, "name": name},
		"spec": map[string]any{
			"mlPolicy": map[string]any{"numNodes": int64(1), "torch": map[string]any{}},
			"template": map[string]any{"spec": map[string]any{"replicatedJobs": []any{map[string]any{
				"name": "node",
				"template": map[string]any{
					"metadata": map[string]any{"labels": map[string]any{"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
					"spec": map[string]any{"template": map[string]any{
						"metadata": map[string]any{"annotations": map[string]any{"sluice.dev/run-for": runFor}},
						"spec": map[string]any{"containers": []any{map[string]any{
							"name": "node", "image": "registry.k8s.io/pause:3.10"}}},
					}},
				},
			}}}},
		},
	}}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: trainerGroup, Version: "v1alpha1", Kind: "TrainingRuntime"})
	return u
}

// queuedTrainJob is a TrainJob in LocalQueue lq of two 1-CPU nodes on the
// TrainingRuntime runtime.
func queuedTrainJob(ns, name, runtime string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"namespace": ns, "name": name, "labels": map[string]any{kueue.QueueNameLabel: "lq"}},
		"spec": map[string]any{
			"runtimeRef": map[string]any{"name": runtime, "kind": "TrainingRuntime"},
			"trainer": map[string]any{"numNodes": int64(2),
				"resourcesPerNode": map[string]any{"requests": map[string]any{"cpu": "1"}}},
		},
	}}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: trainerGroup, Version: "v1alpha1", Kind: "TrainJob"})
	return u
}

func trainJobCompleted(ctx context.Context, c client.Client, job *unstructured.Unstructured) (bool, error) {
	if err := c.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
		return false, err
	}
	raw, _, _ := unstructured.NestedSlice(job.Object, "status", "conditions")
	for _, item := range raw {
		m, _ := item.(map[string]any)
		switch {
		case m["type"] == "Failed" && m["status"] == "True":
			return false, fmt.Errorf("TrainJob %s failed: %v", job.GetName(), m["message"])
		case m["type"] == "Complete" && m["status"] == "True":
			return true, nil
		}
	}
	return false, nil
}

// Two TrainJobs of two 1-CPU nodes in a 3-CPU queue, run by the trainer
// and the JobSet controller: the first runs on its JobSet; the second
// waits suspended (and so does the JobSet the trainer built for it, with
// no pod), its Workload pending with the JobSet's pod set; when the first
// completes the second runs and completes, and the queue ends empty.
func TestTrainJobsWaitRunAndCompleteWithTheTrainer(t *testing.T) {
	c := sharedClient(t)
	const ns = "e2e-trainjob"
	e2eQueue(t, c, ns, "on-demand", "3")
	for _, obj := range []client.Object{trainingRuntime(ns, "long", "10s"), trainingRuntime(ns, "short", "2s")} {
		if err := c.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	first, second := queuedTrainJob(ns, "first", "long"), queuedTrainJob(ns, "second", "short")
	waiting := firstRunsSecondWaits(t, c, ns, first, second, "the first TrainJob's two pods to run", func(ctx context.Context) (bool, error) {
		running, _, err := podCounts(ctx, c, ns, map[string]string{jobset.JobSetNameKey: first.GetName()})
		return running == 2, err
	})
	if len(waiting.Spec.PodSets) != 1 || waiting.Spec.PodSets[0].Name != "node" || waiting.Spec.PodSets[0].Count != 2 {
		t.Errorf("the waiting Workload's pod sets %+v, want the JobSet's node=2", waiting.Spec.PodSets)
	}
	js := &jobset.JobSet{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(second), js); err != nil {
		t.Fatal(err)
	}
	if suspended, _, _ := unstructured.NestedBool(second.Object, "spec", "suspend"); !suspended {
		t.Errorf("the waiting TrainJob is not suspended")
	}
	if js.Spec.Suspend == nil || !*js.Spec.Suspend {
		t.Errorf("the waiting TrainJob's JobSet is not suspended")
	}
	expectNoPods(t, c, ns, map[string]string{jobset.JobSetNameKey: second.GetName()}, "the waiting TrainJob")
	for _, job := range []*unstructured.Unstructured{first, second} {
		eventually(t, "TrainJob "+job.GetName()+" to complete", func(ctx context.Context) (bool, error) {
			return trainJobCompleted(ctx, c, job)
		})
		eventually(t, "the Workload of TrainJob "+job.GetName()+" to finish", func(ctx context.Context) (bool, error) {
			wl, err := workloadOwnedBy(ctx, c, ns, job.GetUID())
			return wl != nil && meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished), err
		})
	}
	eventually(t, "the queue to be empty", func(ctx context.Context) (bool, error) { return queueIsEmpty(ctx, c, ns) })
}
