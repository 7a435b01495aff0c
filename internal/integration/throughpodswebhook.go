package integration

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crwebhook "sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// ThroughPodsWebhook is the webhook of a kind queued through its Pods (a
// Deployment, a StatefulSet, a LeaderWorkerSet): defaulting sends the
// queue of a queued object to its pod templates, with the kind's
// pod-suspending-parent, so that the pod integration gates and counts each
// Pod; validation keeps the queue while Pods may hold quota. With the
// kind's framework disabled it lets everything through: the webhook
// configuration is static.
type ThroughPodsWebhook[T client.Object] struct {
	Enabled bool
	// GVK is the kind, as errors name it.
	GVK schema.GroupVersionKind
	// Parent is the value of pod-suspending-parent on the kind's Pods.
	Parent string
	// Templates are the object's pod templates.
	Templates func(T) []*corev1.PodTemplateSpec
	// Shape, when set, adds what the kind's Pods need besides their queue
	// (a pod group's name and size), template by template.
	Shape func(obj T, tmpl *corev1.PodTemplateSpec)
	// Pods is how many Pods the object has now, from its status: while
	// there are any, its queue does not change.
	Pods func(T) int32
}

// Register serves the kind's defaulting and validating webhooks.
func (w *ThroughPodsWebhook[T]) Register(mgr ctrl.Manager, obj T) error {
	return ctrl.NewWebhookManagedBy(mgr, obj).WithDefaulter(w).WithValidator(w).Complete()
}

// Default puts a queued object's queue on its pod templates.
func (w *ThroughPodsWebhook[T]) Default(_ context.Context, obj T) error {
	queue := obj.GetLabels()[kueue.QueueNameLabel]
	if !w.Enabled || queue == "" {
		return nil
	}
	for _, tmpl := range w.Templates(obj) {
		QueueThroughPods(tmpl, queue, w.Parent)
		if w.Shape != nil {
			w.Shape(obj, tmpl)
		}
	}
	return nil
}

func (w *ThroughPodsWebhook[T]) ValidateCreate(context.Context, T) (crwebhook.Warnings, error) {
	return nil, nil
}

// ValidateUpdate keeps the queue while Pods may hold quota: it changes only
// while the object has no Pods, which sluice reads from its status without
// listing Pods.
func (w *ThroughPodsWebhook[T]) ValidateUpdate(_ context.Context, old, updated T) (crwebhook.Warnings, error) {
	if !w.Enabled {
		return nil, nil
	}
	return nil, ValidateQueueChange(w.GVK.GroupKind(), updated.GetName(), old.GetLabels(), updated.GetLabels(), w.Pods(old))
}

func (w *ThroughPodsWebhook[T]) ValidateDelete(context.Context, T) (crwebhook.Warnings, error) {
	return nil, nil
}
