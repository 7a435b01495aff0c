package multikueue

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/patch"
)

// Reasons of a MultiKueue AdmissionCheck's Active condition.
const (
	reasonBadConfig          = "BadConfig"
	reasonNoUsableClusters   = "NoUsableClusters"
	reasonSomeActiveClusters = "SomeActiveClusters"
)

// AdmissionCheckReconciler keeps the Active condition of the MultiKueue
// AdmissionChecks: active while their MultiKueueConfig exists and at
// least one of its clusters is (a ClusterQueue with an inactive check
// reserves nothing, so no job waits on a dispatch that can't happen).
type AdmissionCheckReconciler struct {
	Client client.Client
}

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=admissionchecks,verbs=get;list;watch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=admissionchecks/status,verbs=get;update;patch

func (r *AdmissionCheckReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ac := &kueue.AdmissionCheck{}
	if err := r.Client.Get(ctx, req.NamespacedName, ac); err != nil || ac.Spec.ControllerName != kueue.MultiKueueControllerName {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	want, err := r.activeCondition(ctx, ac)
	if err != nil {
		return ctrl.Result{}, err
	}
	if have := meta.FindStatusCondition(ac.Status.Conditions, kueue.ConditionActive); have != nil && have.Status == want.Status &&
		have.Reason == want.Reason && have.Message == want.Message && have.ObservedGeneration == want.ObservedGeneration {
		return ctrl.Result{}, nil
	}
	if _, err := patch.Status(ctx, r.Client, ac, func() bool { return meta.SetStatusCondition(&ac.Status.Conditions, want) }); err != nil {
		return ctrl.Result{}, fmt.Errorf("updating the Active condition of AdmissionCheck %s: %w", ac.Name, err)
	}
	return ctrl.Result{}, nil
}

func (r *AdmissionCheckReconciler) activeCondition(ctx context.Context, ac *kueue.AdmissionCheck) (metav1.Condition, error) {
	cond := metav1.Condition{Type: kueue.ConditionActive, Status: metav1.ConditionTrue, Reason: reasonActive,
		Message: "The admission check is active", ObservedGeneration: ac.Generation}
	cfg, err := configOf(ctx, r.Client, ac)
	if err != nil {
		if err != errBadParameters && !apierrors.IsNotFound(err) {
			return cond, err
		}
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, reasonBadConfig, fmt.Sprintf("Can't load the parameters: %v", err)
		return cond, nil
	}
	var missing, inactive []string
	for _, name := range cfg.Spec.Clusters {
		mkc := &kueue.MultiKueueCluster{}
		if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, mkc); err != nil {
			if !apierrors.IsNotFound(err) {
				return cond, fmt.Errorf("reading MultiKueueCluster %s: %w", name, err)
			}
			missing = append(missing, name)
		} else if !meta.IsStatusConditionTrue(mkc.Status.Conditions, kueue.MultiKueueClusterActive) {
			inactive = append(inactive, name)
		}
	}
	if len(missing)+len(inactive) == 0 {
		return cond, nil
	}
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, fmt.Sprintf("Missing clusters: %v", missing))
	}
	if len(inactive) > 0 {
		parts = append(parts, fmt.Sprintf("Inactive clusters: %v", inactive))
	}
	cond.Message = strings.Join(parts, ", ")
	if len(missing)+len(inactive) < len(cfg.Spec.Clusters) {
		cond.Reason = reasonSomeActiveClusters // still usable
		return cond, nil
	}
	cond.Status, cond.Reason = metav1.ConditionFalse, reasonNoUsableClusters
	return cond, nil
}

// SetupWithManager watches the MultiKueue AdmissionChecks, and the
// configs and clusters they depend on.
func (r *AdmissionCheckReconciler) SetupWithManager(mgr ctrl.Manager) error {
	ours := predicate.NewPredicateFuncs(func(o client.Object) bool {
		ac, ok := o.(*kueue.AdmissionCheck)
		return ok && ac.Spec.ControllerName == kueue.MultiKueueControllerName
	})
	all := handler.EnqueueRequestsFromMapFunc(r.allChecks)
	return ctrl.NewControllerManagedBy(mgr).
		For(&kueue.AdmissionCheck{}, builder.WithPredicates(ours)).
		Watches(&kueue.MultiKueueConfig{}, all).
		Watches(&kueue.MultiKueueCluster{}, all).
		Named("multikueue-admissioncheck").
		Complete(r)
}

func (r *AdmissionCheckReconciler) allChecks(ctx context.Context, _ client.Object) []reconcile.Request {
	checks, err := multiKueueChecks(ctx, r.Client)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing AdmissionChecks")
		return nil
	}
	out := make([]reconcile.Request, 0, len(checks))
	for name := range checks {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: name}})
	}
	return out
}
