package webhook

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// +kubebuilder:webhook:path=/validate-kueue-x-k8s-io-v1beta2-resourceflavor,mutating=false,failurePolicy=fail,sideEffects=None,groups=kueue.x-k8s.io,resources=resourceflavors,verbs=create;update,versions=v1beta2,name=vresourceflavor.kueue.x-k8s.io,timeoutSeconds=10,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-kueue-x-k8s-io-v1beta2-clusterqueue,mutating=false,failurePolicy=fail,sideEffects=None,groups=kueue.x-k8s.io,resources=clusterqueues,verbs=create;update,versions=v1beta2,name=vclusterqueue.kueue.x-k8s.io,timeoutSeconds=10,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-kueue-x-k8s-io-v1beta2-cohort,mutating=false,failurePolicy=fail,sideEffects=None,groups=kueue.x-k8s.io,resources=cohorts,verbs=create;update,versions=v1beta2,name=vcohort.kueue.x-k8s.io,timeoutSeconds=10,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-kueue-x-k8s-io-v1beta2-localqueue,mutating=false,failurePolicy=fail,sideEffects=None,groups=kueue.x-k8s.io,resources=localqueues,verbs=create;update,versions=v1beta2,name=vlocalqueue.kueue.x-k8s.io,timeoutSeconds=10,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-kueue-x-k8s-io-v1beta2-workload,mutating=false,failurePolicy=fail,sideEffects=None,groups=kueue.x-k8s.io,resources=workloads;workloads/status,verbs=create;update,versions=v1beta2,name=vworkload.kueue.x-k8s.io,timeoutSeconds=10,admissionReviewVersions=v1

// Setup registers the webhooks of the API with the manager's webhook server:
// validation of every kind, and the priority of new Workloads.
func Setup(mgr ctrl.Manager) error {
	if err := register(mgr, &kueue.ResourceFlavor{}, "ResourceFlavor", ValidateResourceFlavor, nil); err != nil {
		return err
	}
	if err := register(mgr, &kueue.ClusterQueue{}, "ClusterQueue", ValidateClusterQueue, nil); err != nil {
		return err
	}
	if err := register(mgr, &kueue.Cohort{}, "Cohort", ValidateCohort, nil); err != nil {
		return err
	}
	if err := register(mgr, &kueue.LocalQueue{}, "LocalQueue", ValidateLocalQueue, nil); err != nil {
		return err
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &kueue.Workload{}).WithDefaulter(&PriorityDefaulter{Reader: mgr.GetAPIReader()}).Complete(); err != nil {
		return err
	}
	return register(mgr, &kueue.Workload{}, "Workload", ValidateWorkload, ValidateWorkloadUpdate)
}

// register wires pure validation functions into a validating webhook. Without
// an update function, updates are checked like creations.
func register[T client.Object](mgr ctrl.Manager, obj T, kind string, onCreate func(T) field.ErrorList, onUpdate func(oldObj, newObj T) field.ErrorList) error {
	if onUpdate == nil {
		onUpdate = func(_, newObj T) field.ErrorList { return onCreate(newObj) }
	}
	v := &validator[T]{kind: kueue.GroupVersion.WithKind(kind).GroupKind(), onCreate: onCreate, onUpdate: onUpdate}
	return ctrl.NewWebhookManagedBy(mgr, obj).WithValidator(v).Complete()
}

type validator[T client.Object] struct {
	kind     schema.GroupKind
	onCreate func(T) field.ErrorList
	onUpdate func(oldObj, newObj T) field.ErrorList
}

func (v *validator[T]) ValidateCreate(_ context.Context, obj T) (admission.Warnings, error) {
	return nil, v.invalid(obj, v.onCreate(obj))
}

func (v *validator[T]) ValidateUpdate(_ context.Context, oldObj, newObj T) (admission.Warnings, error) {
	return nil, v.invalid(newObj, v.onUpdate(oldObj, newObj))
}

func (v *validator[T]) ValidateDelete(context.Context, T) (admission.Warnings, error) {
	return nil, nil
}

func (v *validator[T]) invalid(obj T, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(v.kind, obj.GetName(), errs)
}
