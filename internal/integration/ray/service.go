package ray

import (
	"context"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crwebhook "sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
	sluicewebhook "github.com/sluicehq/sluice/internal/webhook"
)

// +kubebuilder:webhook:path=/validate-ray-io-v1-rayservice,mutating=false,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=ray.io,resources=rayservices,verbs=create;update,versions=v1,name=vrayservice.kueue.x-k8s.io,admissionReviewVersions=v1
// +kubebuilder:rbac:groups=ray.io,resources=rayservices,verbs=get;list;watch

// A RayService is queued through the RayClusters KubeRay creates for it,
// not as a job of its own: KubeRay copies the service's labels (its
// queue-name) onto each cluster, and each cluster is a queued RayCluster
// with its own Workload. That is what keeps a service inside its quota
// with KubeRay's RayService controller, which suspends nothing itself: a
// zero-downtime upgrade's new cluster runs next to the old one until it
// takes over, so it waits for quota of its own; and an evicted cluster is
// suspended directly (the service's suspend field would only make KubeRay
// prepare another cluster, leaving the serving one running). The service
// is not a parent of its clusters for the same reason.

// ServiceRegistration is the RayService in the list of kinds: a webhook
// that refuses, on the RayService itself, what its clusters' admission
// would refuse later (where KubeRay could only report that it can't create
// them).
var ServiceRegistration = integration.Registration{
	Framework: configapi.FrameworkRayService,
	GVK:       serviceGVK,
	NewObject: func() client.Object { return &rayv1.RayService{} },
	CRD:       "rayservices.ray.io",
	// Enabled with its clusters' integration only (the configuration says).
	QueuedThrough: configapi.FrameworkRayCluster,
	New: func(deps integration.Deps) integration.Setup {
		w := &serviceWebhook{enabled: deps.Enabled, policy: deps.Policy, reader: deps.Reader}
		return integration.SetupFunc(func(mgr ctrl.Manager) error {
			return ctrl.NewWebhookManagedBy(mgr, &rayv1.RayService{}).WithValidator(w).Complete()
		})
	},
}

var (
	serviceGVK     = rayv1.SchemeGroupVersion.WithKind("RayService")
	serviceCluster = field.NewPath("spec", "rayClusterConfig")
)

// serviceWebhook validates the RayServices whose clusters sluice queues.
// With the framework disabled it lets everything through.
type serviceWebhook struct {
	enabled bool
	policy  *integration.Policy
	// reader reads LocalQueues and Namespaces (the manager's cache).
	reader client.Reader
}

func (w *serviceWebhook) ValidateCreate(ctx context.Context, rs *rayv1.RayService) (crwebhook.Warnings, error) {
	return nil, w.validate(ctx, rs)
}

func (w *serviceWebhook) ValidateUpdate(ctx context.Context, _, rs *rayv1.RayService) (crwebhook.Warnings, error) {
	return nil, w.validate(ctx, rs)
}

func (w *serviceWebhook) ValidateDelete(context.Context, *rayv1.RayService) (crwebhook.Warnings, error) {
	return nil, nil
}

// validate checks the queueing metadata the clusters inherit and, when
// they are queued (the service's labels and namespace decide, as they do
// for its clusters), the rules of a queued Ray cluster.
func (w *serviceWebhook) validate(ctx context.Context, rs *rayv1.RayService) error {
	if !w.enabled {
		return nil
	}
	errs := integration.ValidateQueueingMetadata(rs)
	placement, err := w.policy.Decide(ctx, w.reader, rs)
	if err != nil {
		return err
	}
	if placement.Managed {
		errs = append(errs, validateQueuedService(rs)...)
	}
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(serviceGVK.GroupKind(), rs.Name, errs)
}

// validateQueuedService: the service's clusters must be queueable Ray
// clusters, and an upgrade must not start a cluster that grows on its own.
func validateQueuedService(rs *rayv1.RayService) field.ErrorList {
	errs := validateCluster(&rs.Spec.RayClusterSpec, serviceCluster, 1)
	templates := clusterTemplateList(&rs.Spec.RayClusterSpec, serviceCluster)
	for _, t := range templates {
		errs = append(errs, sluicewebhook.ValidatePodSpecAmounts(t.Pod, t.Path.Child("spec"))...)
	}
	errs = append(errs, integration.StandaloneTemplates("RayService", templates)...)
	if s := rs.Spec.UpgradeStrategy; s != nil && ptr.Deref(s.Type, "") == rayv1.NewClusterWithIncrementalUpgrade {
		errs = append(errs, field.NotSupported(field.NewPath("spec", "upgradeStrategy", "type"), *s.Type,
			[]string{string(rayv1.NewCluster), string(rayv1.None)}))
	}
	return errs
}
