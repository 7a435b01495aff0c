package integration

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

func throughPodsDeployments(enabled bool) *ThroughPodsWebhook[*appsv1.Deployment] {
	return &ThroughPodsWebhook[*appsv1.Deployment]{Enabled: enabled, GVK: appsv1.SchemeGroupVersion.WithKind("Deployment"), Parent: "deployment",
		Templates: func(d *appsv1.Deployment) []*corev1.PodTemplateSpec {
			return []*corev1.PodTemplateSpec{&d.Spec.Template}
		},
		Shape: func(_ *appsv1.Deployment, tmpl *corev1.PodTemplateSpec) { tmpl.Annotations["shaped"] = "true" },
		Pods:  func(d *appsv1.Deployment) int32 { return d.Status.Replicas }}
}

func deploymentIn(queue string, pods int32) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{}}}
	if queue != "" {
		d.Labels[kueue.QueueNameLabel] = queue
	}
	d.Status.Replicas = pods
	return d
}

// A queued object's pod templates get its queue, the kind as their
// suspending parent and the kind's shape; an object with no queue, or
// the kind's framework disabled, is left alone.
func TestThroughPodsWebhookDefaultsTheTemplates(t *testing.T) {
	d := deploymentIn("team", 0)
	if err := throughPodsDeployments(true).Default(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	tmpl := d.Spec.Template
	if tmpl.Labels[kueue.QueueNameLabel] != "team" || tmpl.Annotations[kueue.PodSuspendingParentAnno] != "deployment" || tmpl.Annotations["shaped"] != "true" {
		t.Fatalf("template labels %v annotations %v: want the queue, the parent and the shape", tmpl.Labels, tmpl.Annotations)
	}
	for name, c := range map[string]struct {
		enabled bool
		d       *appsv1.Deployment
	}{"no queue": {true, deploymentIn("", 0)}, "framework disabled": {false, deploymentIn("team", 0)}} {
		if err := throughPodsDeployments(c.enabled).Default(context.Background(), c.d); err != nil {
			t.Fatal(err)
		}
		if c.d.Spec.Template.Labels != nil || c.d.Spec.Template.Annotations != nil {
			t.Errorf("%s: the template was changed: %v %v", name, c.d.Spec.Template.Labels, c.d.Spec.Template.Annotations)
		}
	}
}

// The queue changes only while the object has no Pods: otherwise Pods
// admitted in one queue would be counted in another.
func TestThroughPodsWebhookKeepsTheQueueWhilePodsRun(t *testing.T) {
	w := throughPodsDeployments(true)
	_, err := w.ValidateUpdate(context.Background(), deploymentIn("team", 2), deploymentIn("other", 2))
	if !apierrors.IsInvalid(err) {
		t.Fatalf("moving a Deployment with 2 Pods: %v, want invalid", err)
	}
	// Removing the label would let the Pods' replacements run unqueued.
	if _, err := w.ValidateUpdate(context.Background(), deploymentIn("team", 2), deploymentIn("", 2)); !apierrors.IsInvalid(err) {
		t.Errorf("removing the queue of a Deployment with 2 Pods: %v, want invalid", err)
	}
	if _, err := w.ValidateUpdate(context.Background(), deploymentIn("team", 0), deploymentIn("other", 0)); err != nil {
		t.Errorf("moving a Deployment with no Pods: %v", err)
	}
	if _, err := throughPodsDeployments(false).ValidateUpdate(context.Background(), deploymentIn("team", 2), deploymentIn("other", 2)); err != nil {
		t.Errorf("framework disabled: %v", err)
	}
}
