// Package deployment queues a Deployment through its Pods: the webhook
// copies the Deployment's queue-name onto its pod template, with
// kueue.x-k8s.io/pod-suspending-parent, so that each Pod is gated and is its
// own Workload (the pod integration does the rest). Scaling and rolling
// updates need nothing more: new Pods queue, removed Pods free their quota.
// It must not create Workloads itself.
package deployment

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
)

// +kubebuilder:webhook:path=/mutate-apps-v1-deployment,mutating=true,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=apps,resources=deployments,verbs=create;update,versions=v1,name=mdeployment.kueue.x-k8s.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-apps-v1-deployment,mutating=false,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=apps,resources=deployments,verbs=create;update,versions=v1,name=vdeployment.kueue.x-k8s.io,admissionReviewVersions=v1

// Framework is the value of pod-suspending-parent on a Deployment's Pods.
const Framework = "deployment"

// Webhook passes a Deployment's queue to its Pods. With the deployment
// framework disabled it lets everything through.
func Webhook(enabled bool) *integration.ThroughPodsWebhook[*appsv1.Deployment] {
	return &integration.ThroughPodsWebhook[*appsv1.Deployment]{Enabled: enabled, GVK: gvk, Parent: Framework,
		Templates: func(d *appsv1.Deployment) []*corev1.PodTemplateSpec {
			return []*corev1.PodTemplateSpec{&d.Spec.Template}
		},
		Pods: func(d *appsv1.Deployment) int32 { return d.Status.Replicas }}
}

var gvk = appsv1.SchemeGroupVersion.WithKind("Deployment")

// Registration is apps/v1 Deployment in the list of kinds: queued through
// its Pods, a known owner for the standalone walk.
var Registration = integration.Registration{
	Framework: configapi.FrameworkDeployment,
	GVK:       gvk,
	NewObject: func() client.Object { return &appsv1.Deployment{} },
	New: func(deps integration.Deps) integration.Setup {
		return integration.SetupFunc(func(mgr ctrl.Manager) error { return Webhook(deps.Enabled).Register(mgr, &appsv1.Deployment{}) })
	},
	ThroughPods: true,
}
