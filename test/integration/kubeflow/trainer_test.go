package kubeflow

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
	"github.com/sluicehq/sluice/internal/integration/trainjob"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// There is no Kubeflow trainer here (its module does not build with
// sluice's Kubernetes libraries): trainerBuilds plays its part where a test
// says it acts, as the trainer v2.2 does it (its JobSet plugin's Build).

// runtime is a training runtime as these tests use it: one "node"
// replicated Job of nodes pods of cpu each.
type runtime struct {
	nodes int32
	cpu   string
}

// newTrainJob is a TrainJob in LocalQueue lq referring to a
// ClusterTrainingRuntime (none exists: the trainer here is the test).
func newTrainJob(ns string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"namespace": ns, "name": cluster.Unique("train"), "labels": map[string]any{kueue.QueueNameLabel: "lq"}},
		"spec":     map[string]any{"runtimeRef": map[string]any{"name": "torch-distributed"}},
	}}
	u.SetGroupVersionKind(trainjob.GVK)
	return u
}

func trainJobWorkload(job *unstructured.Unstructured) *kueue.Workload {
	return &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: job.GetNamespace(), Name: integration.WorkloadName(trainjob.GVK, job.GetName(), job.GetUID())}}
}

// trainerBuilds does what the trainer does when it reconciles the TrainJob:
// it builds the JobSet from the runtime with the TrainJob's runtime patches
// merged into each replicated Job's template and the TrainJob's suspend,
// and applies it unless both the TrainJob and an existing JobSet run (the
// trainer leaves a running JobSet alone). It returns the JobSet as the API
// server stored it (sluice's JobSet webhook may have changed it).
func trainerBuilds(t *testing.T, job *unstructured.Unstructured, rt runtime) *jobsetapi.JobSet {
	t.Helper()
	ctx := context.Background()
	js := &jobsetapi.JobSet{}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		current := job.DeepCopy()
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(job), current); err != nil {
			return err
		}
		suspend, _, _ := unstructured.NestedBool(current.Object, "spec", "suspend")
		template, err := patchedTemplate(current, rt)
		if err != nil {
			return err
		}
		err = cluster.Client.Get(ctx, client.ObjectKeyFromObject(job), js)
		switch {
		case apierrors.IsNotFound(err):
			js = &jobsetapi.JobSet{ObjectMeta: metav1.ObjectMeta{Namespace: job.GetNamespace(), Name: job.GetName(),
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(current, trainjob.GVK)}}}
			js.Spec = jobsetapi.JobSetSpec{Suspend: ptr.To(suspend), ReplicatedJobs: []jobsetapi.ReplicatedJob{{Name: "node", Replicas: 1, Template: template}}}
			return cluster.Client.Create(ctx, js)
		case err != nil:
			return err
		case !suspend && !ptr.Deref(js.Spec.Suspend, false):
			return nil
		}
		js.Spec.Suspend = ptr.To(suspend)
		js.Spec.ReplicatedJobs = []jobsetapi.ReplicatedJob{{Name: "node", Replicas: 1, Template: template}}
		return cluster.Client.Update(ctx, js)
	})
	if err != nil {
		t.Fatalf("building the JobSet of TrainJob %s as the trainer would: %v", job.GetName(), err)
	}
	return js
}

// patchedTemplate is the runtime's "node" Job template with the TrainJob's
// runtime patches for it merged in (strategic merge, as the trainer does).
func patchedTemplate(job *unstructured.Unstructured, rt runtime) (batchv1.JobTemplateSpec, error) {
	template := batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Parallelism: ptr.To(rt.nodes), Completions: ptr.To(rt.nodes),
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{
			Name: "node", Image: "pytorch", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(rt.cpu)}}}}}}}}
	patches, _, _ := unstructured.NestedSlice(job.Object, "spec", "runtimePatches")
	for _, p := range patches {
		rjobs, _, _ := unstructured.NestedSlice(p.(map[string]any), "trainingRuntimeSpec", "template", "spec", "replicatedJobs")
		for _, rj := range rjobs {
			m := rj.(map[string]any)
			if m["name"] != "node" {
				continue
			}
			source, err := json.Marshal(template)
			if err != nil {
				return template, err
			}
			patch, err := json.Marshal(m["template"])
			if err != nil {
				return template, err
			}
			merged, err := strategicpatch.StrategicMergePatch(source, patch, batchv1.JobTemplateSpec{})
			if err != nil {
				return template, err
			}
			template = batchv1.JobTemplateSpec{}
			if err := json.Unmarshal(merged, &template); err != nil {
				return template, err
			}
		}
	}
	return template, nil
}

// setTrainJobStatus writes the TrainJob's status as the trainer would.
func setTrainJobStatus(t *testing.T, job *unstructured.Unstructured, status map[string]any) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		current := job.DeepCopy()
		if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(job), current); err != nil {
			return err
		}
		current.Object["status"] = status
		return cluster.Client.Status().Update(context.Background(), current)
	})
	if err != nil {
		t.Fatalf("writing the status of TrainJob %s: %v", job.GetName(), err)
	}
}

func waitTrainJob(t *testing.T, job *unstructured.Unstructured, what string, cond func(*unstructured.Unstructured) error) *unstructured.Unstructured {
	t.Helper()
	return framework.WaitFor(t, cluster.Client, job, what, cond)
}

func trainJobSuspended(job *unstructured.Unstructured) bool {
	suspended, _, _ := unstructured.NestedBool(job.Object, "spec", "suspend")
	return suspended
}

// sluicePatch is sluice's entry in the TrainJob's runtime patches, or nil.
func sluicePatch(job *unstructured.Unstructured) map[string]any {
	patches, _, _ := unstructured.NestedSlice(job.Object, "spec", "runtimePatches")
	for _, p := range patches {
		if m := p.(map[string]any); m["manager"] == "kueue.x-k8s.io/manager" {
			return m
		}
	}
	return nil
}

// injectsAdmission tells whether sluice's runtime patch injects an
// admission (rather than rests).
func injectsAdmission(job *unstructured.Unstructured) bool {
	rjobs, _, _ := unstructured.NestedSlice(sluicePatch(job), "trainingRuntimeSpec", "template", "spec", "replicatedJobs")
	for _, rj := range rjobs {
		if admitted, _, _ := unstructured.NestedString(rj.(map[string]any), "template", "spec", "template", "metadata", "annotations", "sluice.dev/admitted"); admitted == "true" {
			return true
		}
	}
	return false
}

// trainJobRuns: unsuspended by sluice, with an admission in its runtime
// patch.
func trainJobRuns(job *unstructured.Unstructured) error {
	if trainJobSuspended(job) || !injectsAdmission(job) {
		return fmt.Errorf("suspended %v, admission injected %v", trainJobSuspended(job), injectsAdmission(job))
	}
	return nil
}
