// Package deployment queues a Deployment through its Pods: the webhook
// copies the Deployment's queue-name onto its pod template, with
// kueue.x-k8s.io/pod-suspending-parent, so that each Pod is gated and is its
// own Workload (the pod integration does the rest). Scaling and rolling
// updates need nothing more: new Pods queue, removed Pods free their quota.
// It must not create Workloads itself.
package deployment

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
)

// +kubebuilder:webhook:path=/mutate-apps-v1-deployment,mutating=true,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=apps,resources=deployments,verbs=create;update,versions=v1,name=mdeployment.kueue.x-k8s.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-apps-v1-deployment,mutating=false,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=apps,resources=deployments,verbs=create;update,versions=v1,name=vdeployment.kueue.x-k8s.io,admissionReviewVersions=v1

// Framework is the value of pod-suspending-parent on a Deployment's Pods.
const Framework = "deployment"

// Webhook passes a Deployment's queue to its Pods. With the deployment
// framework disabled it lets everything through.
type Webhook struct {
	Enabled bool
}

// SetupWebhook registers both webhooks of Deployments.
func SetupWebhook(mgr ctrl.Manager, w *Webhook) error {
	return ctrl.NewWebhookManagedBy(mgr, &appsv1.Deployment{}).WithDefaulter(w).WithValidator(w).Complete()
}

// Default labels the pod template with the Deployment's queue.
func (w *Webhook) Default(_ context.Context, d *appsv1.Deployment) error {
	queue := d.Labels[kueue.QueueNameLabel]
	if !w.Enabled || queue == "" {
		return nil
	}
	integration.QueueThroughPods(&d.Spec.Template, queue, Framework)
	return nil
}

func (w *Webhook) ValidateCreate(context.Context, *appsv1.Deployment) (admission.Warnings, error) {
	return nil, nil
}

// ValidateUpdate keeps the queue while Pods may hold quota: it changes only
// while the Deployment has no Pods (status.replicas is 0), which sluice
// reads without listing Pods.
func (w *Webhook) ValidateUpdate(_ context.Context, oldD, newD *appsv1.Deployment) (admission.Warnings, error) {
	if !w.Enabled {
		return nil, nil
	}
	return nil, integration.ValidateQueueChange(appsv1.SchemeGroupVersion.WithKind("Deployment").GroupKind(), newD.Name, oldD.Labels, newD.Labels, oldD.Status.Replicas)
}

func (w *Webhook) ValidateDelete(context.Context, *appsv1.Deployment) (admission.Warnings, error) {
	return nil, nil
}

// Registration is apps/v1 Deployment in the list of kinds: queued through
// its Pods, a known owner for the standalone walk.
var Registration = integration.Registration{
	Framework: configapi.FrameworkDeployment,
	GVK:       appsv1.SchemeGroupVersion.WithKind("Deployment"),
	NewObject: func() client.Object { return &appsv1.Deployment{} },
	New: func(deps integration.Deps) integration.Setup {
		return integration.SetupFunc(func(mgr ctrl.Manager) error { return SetupWebhook(mgr, &Webhook{Enabled: deps.Enabled}) })
	},
	ThroughPods: true,
}
