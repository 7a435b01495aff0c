package controller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/apply"
	"github.com/sluicehq/sluice/internal/patch"
)

// ResourceFlavorReconciler keeps the resource-in-use finalizer on every live
// flavor and, when a flavor is deleted, holds the deletion until no
// ClusterQueue references it any more.
type ResourceFlavorReconciler struct {
	Client  client.Client
	Tracker *apply.Tracker
}

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=resourceflavors,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=resourceflavors/finalizers,verbs=update

func (r *ResourceFlavorReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return ignoreConflict(r.reconcile(ctx, req))
}

func (r *ResourceFlavorReconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	rf := &kueue.ResourceFlavor{}
	if err := r.Client.Get(ctx, req.NamespacedName, rf); err != nil {
		if apierrors.IsNotFound(err) {
			r.Tracker.DeleteFlavor(req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	r.Tracker.SetFlavor(rf)
	if rf.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, ensureFinalizer(ctx, r.Client, rf)
	}
	users := &kueue.ClusterQueueList{}
	if err := r.Client.List(ctx, users, client.MatchingFields{indexClusterQueueFlavors: rf.Name}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing ClusterQueues that use flavor %s: %w", rf.Name, err)
	}
	if len(users.Items) > 0 {
		// Held: the ClusterQueue watch brings us back when a user lets go.
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, removeFinalizer(ctx, r.Client, rf)
}

// SetupWithManager watches flavors and the ClusterQueues that name them.
func (r *ResourceFlavorReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&kueue.ResourceFlavor{}).
		Watches(&kueue.ClusterQueue{}, handler.EnqueueRequestsFromMapFunc(
			func(_ context.Context, o client.Object) []reconcile.Request {
				return requestsFor(flavorNames(o.(*kueue.ClusterQueue).Spec.ResourceGroups))
			})).
		Named("resourceflavor").
		Complete(r)
}

func ensureFinalizer(ctx context.Context, c client.Client, obj client.Object) error {
	if controllerutil.ContainsFinalizer(obj, kueue.ResourceInUseFinalizerName) {
		return nil
	}
	if _, err := patch.Object(ctx, c, obj, func() bool { return controllerutil.AddFinalizer(obj, kueue.ResourceInUseFinalizerName) }); err != nil {
		return fmt.Errorf("adding finalizer to %s: %w", obj.GetName(), err)
	}
	return nil
}

func removeFinalizer(ctx context.Context, c client.Client, obj client.Object) error {
	if !controllerutil.ContainsFinalizer(obj, kueue.ResourceInUseFinalizerName) {
		return nil
	}
	if _, err := patch.Object(ctx, c, obj, func() bool { return controllerutil.RemoveFinalizer(obj, kueue.ResourceInUseFinalizerName) }); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("removing finalizer from %s: %w", obj.GetName(), err)
	}
	return nil
}

func requestsFor(names []string) []reconcile.Request {
	reqs := make([]reconcile.Request, 0, len(names))
	for _, n := range names {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: n}})
	}
	return reqs
}
