package ray

import (
	"context"
	"fmt"
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// newQueue is a namespace with LocalQueue "lq" in front of its own
// ClusterQueue of cpu in one flavor (nodes labelled pool=<flavor>).
func newQueue(t *testing.T, cpu string) (string, string) {
	t.Helper()
	return cluster.NewQueue(t, "ray", cpu)
}

func podTemplate(cpu string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray", Image: "rayproject/ray",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}
}

// clusterSpec is a Ray cluster of a head (1 CPU) and a worker group
// "Workers" of 2 replicas (1 CPU each).
func clusterSpec() *rayv1.RayClusterSpec {
	return &rayv1.RayClusterSpec{
		HeadGroupSpec: rayv1.HeadGroupSpec{RayStartParams: map[string]string{}, Template: podTemplate("1")},
		WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{GroupName: "Workers", Replicas: ptr.To(int32(2)), MinReplicas: ptr.To(int32(0)), MaxReplicas: ptr.To(int32(4)),
			RayStartParams: map[string]string{}, Template: podTemplate("1")}},
	}
}

// newRayJob is a RayJob in LocalQueue lq (none when empty) with its own
// cluster and a submitter of half a CPU: 3.5 CPU in all.
func newRayJob(ns, lq string) *rayv1.RayJob {
	submitter := podTemplate("500m")
	rj := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster.Unique("rayjob")}, Spec: rayv1.RayJobSpec{
		Entrypoint: "python train.py", RayClusterSpec: clusterSpec(), ShutdownAfterJobFinishes: true, SubmitterPodTemplate: &submitter,
	}}
	if lq != "" {
		rj.Labels = map[string]string{kueue.QueueNameLabel: lq}
	}
	return rj
}

// newRayCluster is a RayCluster in LocalQueue lq: 3 CPU.
func newRayCluster(ns, lq string) *rayv1.RayCluster {
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster.Unique("raycluster")}, Spec: *clusterSpec()}
	if lq != "" {
		rc.Labels = map[string]string{kueue.QueueNameLabel: lq}
	}
	return rc
}

func workloadOf(obj client.Object, kind integration.Kind) *kueue.Workload {
	return &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: obj.GetNamespace(), Name: integration.WorkloadName(kind.GVK, obj.GetName(), obj.GetUID())}}
}

// waitFor waits until the object satisfies cond and returns it.
func waitFor[T client.Object](t *testing.T, obj T, what string, cond func(T) error) T {
	t.Helper()
	return framework.WaitFor(t, cluster.Client, obj, what, cond)
}

// setStatus writes an object's status as KubeRay would.
func setStatus[T client.Object](t *testing.T, obj T, mutate func(T)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		current := obj.DeepCopyObject().(T)
		if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), current); err != nil {
			return err
		}
		mutate(current)
		return cluster.Client.Status().Update(context.Background(), current)
	})
	if err != nil {
		t.Fatalf("writing the status of %s: %v", obj.GetName(), err)
	}
}

// kubeRayCluster is the RayCluster KubeRay makes for a RayJob: it names it
// in the RayJob's status first, then creates it (not here: the caller
// does) from the RayJob's rayClusterSpec, controlled by the RayJob.
func kubeRayCluster(t *testing.T, rj *rayv1.RayJob) *rayv1.RayCluster {
	t.Helper()
	name := cluster.Unique(rj.Name)
	setStatus(t, rj, func(current *rayv1.RayJob) { current.Status.RayClusterName = name })
	return &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: rj.Namespace, Name: name,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rj, rayv1.SchemeGroupVersion.WithKind("RayJob"))}},
		Spec: *rj.Spec.RayClusterSpec.DeepCopy()}
}

// waitEvent waits for an event about obj with the reason and a note
// containing part.
func waitEvent(t *testing.T, obj client.Object, reason, part string) {
	t.Helper()
	framework.Eventually(t, fmt.Sprintf("a %s event on %s", reason, obj.GetName()), func(ctx context.Context) (bool, error) {
		list := &eventsv1.EventList{}
		if err := cluster.Client.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
			return false, err
		}
		for _, e := range list.Items {
			if e.Regarding.UID == obj.GetUID() && e.Reason == reason && strings.Contains(e.Note, part) {
				return true, nil
			}
		}
		return false, fmt.Errorf("%d events, none matching", len(list.Items))
	})
}

// suspended and running are a RayCluster's two states, as waitFor
// conditions.
func suspended(rc *rayv1.RayCluster) error { return framework.Suspended(rc.Spec.Suspend) }

func running(rc *rayv1.RayCluster) error { return framework.Running(rc.Spec.Suspend) }
