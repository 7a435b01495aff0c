package provisioning

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/patch"
)

// Reasons of the Active condition of this controller's AdmissionChecks.
const (
	reasonActive           = "Active"
	reasonBadParametersRef = "BadParametersRef"
	reasonNotServed        = "ProvisioningRequestsNotServed"
)

// AdmissionCheckReconciler keeps the Active condition of the
// AdmissionChecks run by this controller: Active when their parameters
// name a ProvisioningRequestConfig that exists and the cluster serves
// ProvisioningRequests (a ClusterQueue using an inactive check admits
// nothing, so nothing runs unprovisioned).
type AdmissionCheckReconciler struct {
	Client client.Client
	// Served tells whether the cluster serves autoscaling.x-k8s.io/v1
	// ProvisioningRequests (checked at startup).
	Served bool
}

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=admissionchecks,verbs=get;list;watch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=admissionchecks/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=provisioningrequestconfigs,verbs=get;list;watch

func (r *AdmissionCheckReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ac := &kueue.AdmissionCheck{}
	if err := r.Client.Get(ctx, req.NamespacedName, ac); err != nil || ac.Spec.ControllerName != kueue.ProvisioningRequestControllerName {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	want, err := r.activeCondition(ctx, ac)
	if err != nil {
		return ctrl.Result{}, err
	}
	if have := meta.FindStatusCondition(ac.Status.Conditions, kueue.ConditionActive); have != nil && have.Status == want.Status &&
		have.Reason == want.Reason && have.Message == want.Message {
		return ctrl.Result{}, nil
	}
	if _, err := patch.Status(ctx, r.Client, ac, func() bool { return meta.SetStatusCondition(&ac.Status.Conditions, want) }); err != nil {
		return ctrl.Result{}, fmt.Errorf("updating the Active condition of AdmissionCheck %s: %w", ac.Name, err)
	}
	return ctrl.Result{}, nil
}

func (r *AdmissionCheckReconciler) activeCondition(ctx context.Context, ac *kueue.AdmissionCheck) (metav1.Condition, error) {
	inactive := func(reason, format string, args ...any) metav1.Condition {
		return metav1.Condition{Type: kueue.ConditionActive, Status: metav1.ConditionFalse, Reason: reason, Message: fmt.Sprintf(format, args...),
			ObservedGeneration: ac.Generation}
	}
	if !r.Served {
		return inactive(reasonNotServed, "the cluster does not serve autoscaling.x-k8s.io/v1 ProvisioningRequests (install the cluster autoscaler's CRD, then restart sluice)"), nil
	}
	p := ac.Spec.Parameters
	if p == nil || p.APIGroup != kueue.GroupVersion.Group || p.Kind != "ProvisioningRequestConfig" {
		return inactive(reasonBadParametersRef, "parameters must name a %s ProvisioningRequestConfig", kueue.GroupVersion.Group), nil
	}
	if _, err := config(ctx, r.Client, ac); err != nil {
		if apierrors.IsNotFound(err) {
			return inactive(reasonBadParametersRef, "ProvisioningRequestConfig %s not found", p.Name), nil
		}
		return metav1.Condition{}, err
	}
	return metav1.Condition{Type: kueue.ConditionActive, Status: metav1.ConditionTrue, Reason: reasonActive,
		Message: "The admission check is active", ObservedGeneration: ac.Generation}, nil
}

// config reads the ProvisioningRequestConfig an AdmissionCheck names.
func config(ctx context.Context, c client.Reader, ac *kueue.AdmissionCheck) (*kueue.ProvisioningRequestConfig, error) {
	prc := &kueue.ProvisioningRequestConfig{}
	if p := ac.Spec.Parameters; p == nil || p.Kind != "ProvisioningRequestConfig" {
		return nil, apierrors.NewNotFound(kueue.GroupVersion.WithResource("provisioningrequestconfigs").GroupResource(), "")
	}
	if err := c.Get(ctx, client.ObjectKey{Name: ac.Spec.Parameters.Name}, prc); err != nil {
		return nil, err
	}
	return prc, nil
}

// SetupWithManager watches AdmissionChecks, and the configs they name.
func (r *AdmissionCheckReconciler) SetupWithManager(mgr ctrl.Manager) error {
	ours := predicate.NewPredicateFuncs(func(o client.Object) bool {
		ac, ok := o.(*kueue.AdmissionCheck)
		return ok && ac.Spec.ControllerName == kueue.ProvisioningRequestControllerName
	})
	return ctrl.NewControllerManagedBy(mgr).
		For(&kueue.AdmissionCheck{}, builder.WithPredicates(ours)).
		Watches(&kueue.ProvisioningRequestConfig{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return checksUsing(ctx, r.Client, o.GetName())
		})).
		Named("provisioning-admissioncheck").
		Complete(r)
}

// checksUsing are this controller's AdmissionChecks that name a config.
func checksUsing(ctx context.Context, c client.Reader, configName string) []reconcile.Request {
	list := &kueue.AdmissionCheckList{}
	if err := c.List(ctx, list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing AdmissionChecks")
		return nil
	}
	var out []reconcile.Request
	for _, ac := range list.Items {
		if ac.Spec.ControllerName == kueue.ProvisioningRequestControllerName && ac.Spec.Parameters != nil && ac.Spec.Parameters.Name == configName {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Name: ac.Name}})
		}
	}
	return out
}
