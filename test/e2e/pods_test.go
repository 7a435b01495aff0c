package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

func gatedBySluice(p *corev1.Pod) bool {
	return slices.ContainsFunc(p.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == kueue.AdmissionSchedulingGate })
}

// podCounts counts the namespace's Pods matching labels: Running, and
// waiting at sluice's gate.
func podCounts(ctx context.Context, c client.Client, ns string, labels map[string]string) (running, gated int, err error) {
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels(labels)); err != nil {
		return 0, 0, err
	}
	for _, p := range pods.Items {
		switch {
		case gatedBySluice(&p):
			gated++
		case p.Status.Phase == corev1.PodRunning:
			running++
		}
	}
	return running, gated, nil
}

// In a 4-CPU queue where a 1-CPU Job runs, a Deployment of four 1-CPU
// replicas gets three Pods running and the fourth gated; the fourth starts
// when the Job completes.
func TestDeploymentPodsQueue(t *testing.T) {
	c := sharedClient(t)
	e2eQueue(t, c, "e2e-deploy", "on-demand", "4")
	job := queuedJob("e2e-deploy", "first", 1, "15s")
	if err := c.Create(t.Context(), job); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Job to run", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
			return false, err
		}
		return job.Status.Active == 1, nil
	})
	labels := map[string]string{"app": "server"}
	tmpl := podTemplate(labels, "")
	tmpl.Spec.RestartPolicy = corev1.RestartPolicyAlways
	tmpl.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "e2e-deploy", Name: "server", Labels: map[string]string{kueue.QueueNameLabel: "lq"}},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](4), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl},
	}
	if err := c.Create(t.Context(), deploy); err != nil {
		t.Fatal(err)
	}
	eventually(t, "three replicas running and one gated", func(ctx context.Context) (bool, error) {
		running, gated, err := podCounts(ctx, c, "e2e-deploy", labels)
		return running == 3 && gated == 1, err
	})
	// The Job ends and frees its CPU for the fourth replica.
	eventually(t, "the fourth replica to run once the Job completed", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
			return false, err
		}
		if !hasCondition(job.Status.Conditions, batchv1.JobComplete) {
			return false, nil
		}
		running, gated, err := podCounts(ctx, c, "e2e-deploy", labels)
		return running == 4 && gated == 0, err
	})
}

// The Spark-like scenario: a driver Pod owns three executor Pods with
// standalone; with quota for the driver and two executors, the third waits
// and runs when one ends.
func TestSparkLikeExecutorsQueue(t *testing.T) {
	c := sharedClient(t)
	e2eQueue(t, c, "e2e-spark", "on-demand", "3")
	pod := func(name, runFor string, owner *corev1.Pod) *corev1.Pod {
		tmpl := podTemplate(map[string]string{kueue.QueueNameLabel: "lq", "role": name[:6]}, runFor)
		tmpl.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "e2e-spark", Name: name, Labels: tmpl.Labels, Annotations: tmpl.Annotations}, Spec: tmpl.Spec}
		if owner != nil {
			p.Annotations[kueue.StandaloneAnnotation] = "true"
			p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, corev1.SchemeGroupVersion.WithKind("Pod"))}
		}
		return p
	}
	driver := pod("driver", "", nil)
	if err := c.Create(t.Context(), driver); err != nil {
		t.Fatal(err)
	}
	for i, runFor := range []string{"5s", "60s", "60s"} {
		if err := c.Create(t.Context(), pod(fmt.Sprintf("execut-%d", i), runFor, driver)); err != nil {
			t.Fatal(err)
		}
	}
	executors := map[string]string{"role": "execut"}
	eventually(t, "two executors running and one gated", func(ctx context.Context) (bool, error) {
		running, gated, err := podCounts(ctx, c, "e2e-spark", executors)
		return running == 2 && gated == 1, err
	})
	eventually(t, "the third executor to run after the first ended", func(ctx context.Context) (bool, error) {
		running, gated, err := podCounts(ctx, c, "e2e-spark", executors)
		return running == 2 && gated == 0, err
	})
}
