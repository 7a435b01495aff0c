package controller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/apply"
)

// LocalQueueReconciler keeps a LocalQueue's Active condition: false while its
// ClusterQueue is missing or inactive, or while the LocalQueue is stopped.
type LocalQueueReconciler struct {
	Client  client.Client
	Tracker *apply.Tracker
}

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=localqueues,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=localqueues/status,verbs=get;update;patch

func (r *LocalQueueReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return ignoreConflict(r.reconcile(ctx, req))
}

func (r *LocalQueueReconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	lq := &kueue.LocalQueue{}
	if err := r.Client.Get(ctx, req.NamespacedName, lq); err != nil {
		if apierrors.IsNotFound(err) {
			r.Tracker.DeleteLocalQueue(req.String())
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	r.Tracker.SetLocalQueue(lq)
	cq := &kueue.ClusterQueue{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: string(lq.Spec.ClusterQueue)}, cq); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("reading ClusterQueue %s: %w", lq.Spec.ClusterQueue, err)
		}
		cq = nil
	}
	return ctrl.Result{}, setActiveCondition(ctx, r.Client, lq, &lq.Status.Conditions, localQueueActive(lq, cq))
}

func localQueueActive(lq *kueue.LocalQueue, cq *kueue.ClusterQueue) metav1.Condition {
	inactive := inactiveCondition("Can't submit new workloads: ")
	switch {
	case lq.Spec.StopPolicy != nil && *lq.Spec.StopPolicy != kueue.StopPolicyNone:
		return inactive(kueue.ReasonStopped, "stopPolicy is %s", *lq.Spec.StopPolicy)
	case cq == nil:
		return inactive(kueue.ReasonClusterQueueDoesNotExist, "ClusterQueue %s doesn't exist", lq.Spec.ClusterQueue)
	case !meta.IsStatusConditionTrue(cq.Status.Conditions, kueue.ConditionActive):
		reason := "it is not active yet"
		if c := meta.FindStatusCondition(cq.Status.Conditions, kueue.ConditionActive); c != nil {
			reason = c.Reason
		}
		return inactive(kueue.ReasonClusterQueueIsInactive, "ClusterQueue %s is inactive (%s)", cq.Name, reason)
	}
	return metav1.Condition{Type: kueue.ConditionActive, Status: metav1.ConditionTrue, Reason: kueue.ReasonReady,
		Message: "Can submit new workloads to ClusterQueue " + cq.Name}
}

// SetupWithManager watches LocalQueues and the ClusterQueues they point to.
func (r *LocalQueueReconciler) SetupWithManager(mgr ctrl.Manager) error {
	c := mgr.GetClient()
	return ctrl.NewControllerManagedBy(mgr).
		For(&kueue.LocalQueue{}).
		Watches(&kueue.ClusterQueue{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			list := &kueue.LocalQueueList{}
			if err := c.List(ctx, list, client.MatchingFields{indexLocalQueueCQ: o.GetName()}); err != nil {
				ctrl.LoggerFrom(ctx).Error(err, "listing LocalQueues of a ClusterQueue", "clusterQueue", o.GetName())
				return nil
			}
			reqs := make([]reconcile.Request, 0, len(list.Items))
			for _, lq := range list.Items {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&lq)})
			}
			return reqs
		})).
		Named("localqueue").
		Complete(r)
}
