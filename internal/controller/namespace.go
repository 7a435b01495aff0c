package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluicehq/sluice/internal/apply"
)

// NamespaceReconciler feeds namespace labels to admission, which matches
// them against ClusterQueue namespaceSelectors.
type NamespaceReconciler struct {
	Client  client.Client
	Tracker *apply.Tracker
}

func (r *NamespaceReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ns := &corev1.Namespace{}
	if err := r.Client.Get(ctx, req.NamespacedName, ns); err != nil {
		if apierrors.IsNotFound(err) {
			r.Tracker.DeleteNamespace(req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	r.Tracker.SetNamespace(ns.Name, ns.Labels)
	return ctrl.Result{}, nil
}

// SetupWithManager watches namespaces.
func (r *NamespaceReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).For(&corev1.Namespace{}).Named("namespace").Complete(r)
}
