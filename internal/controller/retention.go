package controller

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/workload"
)

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads,verbs=delete
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=delete

// Retention is objectRetentionPolicies.workloads: how long a finished
// Workload, and a job whose Workload sluice deactivated, are kept (nil:
// forever).
type Retention struct {
	AfterFinished    *time.Duration
	AfterDeactivated *time.Duration
}

// deactivatedBySluice tells a workload sluice took out of its queue for
// good (it ran past its maximum execution time; Kueue's reasons start with
// DeactivatedDueTo), from when. A user's own deactivation does not count.
func deactivatedBySluice(wl *kueue.Workload) (time.Time, bool) {
	if workload.IsActive(wl) {
		return time.Time{}, false
	}
	c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted)
	if c == nil || c.Status != metav1.ConditionTrue ||
		(c.Reason != kueue.EvictedByMaximumExecutionTime && !strings.HasPrefix(c.Reason, kueue.EvictedByDeactivation+"DueTo")) {
		return time.Time{}, false
	}
	return c.LastTransitionTime.Time, true
}

// retain deletes a finished Workload, or a deactivated one's job, once
// its retention ran out, and otherwise comes back when it will have.
func (r *WorkloadReconciler) retain(ctx context.Context, wl *kueue.Workload) (ctrl.Result, error) {
	if r.Retention == nil {
		return ctrl.Result{}, nil
	}
	now := r.Clock.Now()
	if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadFinished); c != nil && c.Status == metav1.ConditionTrue {
		if r.Retention.AfterFinished == nil {
			return ctrl.Result{}, nil
		}
		if left := c.LastTransitionTime.Add(*r.Retention.AfterFinished).Sub(now); left > 0 {
			return ctrl.Result{RequeueAfter: left}, nil
		}
		ctrl.LoggerFrom(ctx).V(2).Info("deleting a finished workload: its retention ran out", "workload", workload.Key(wl))
		return ctrl.Result{}, deleteInBackground(ctx, r.Client, kueue.GroupVersion.WithKind("Workload"), wl.Namespace, wl.Name, wl.UID)
	}
	since, deactivated := deactivatedBySluice(wl)
	if !deactivated || r.Retention.AfterDeactivated == nil {
		return ctrl.Result{}, nil
	}
	if left := since.Add(*r.Retention.AfterDeactivated).Sub(now); left > 0 {
		return ctrl.Result{RequeueAfter: left}, nil
	}
	// The job goes, as in Kueue, and its Workload with it; a Workload
	// without a job goes alone.
	if owner := metav1.GetControllerOf(wl); owner != nil {
		ctrl.LoggerFrom(ctx).V(2).Info("deleting a deactivated workload's job: its retention ran out", "workload", workload.Key(wl), "owner", owner.Name)
		return ctrl.Result{}, deleteInBackground(ctx, r.Client, schema.FromAPIVersionAndKind(owner.APIVersion, owner.Kind), wl.Namespace, owner.Name, owner.UID)
	}
	return ctrl.Result{}, deleteInBackground(ctx, r.Client, kueue.GroupVersion.WithKind("Workload"), wl.Namespace, wl.Name, wl.UID)
}

// deleteInBackground deletes an object (its dependents after it), on the
// condition that it is still the object seen (same UID): one of the same
// name created since is not touched.
func deleteInBackground(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, namespace, name string, uid types.UID) error {
	target := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	target.SetGroupVersionKind(gvk)
	err := c.Delete(ctx, target, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &uid})
	if err := client.IgnoreNotFound(err); err != nil {
		return fmt.Errorf("deleting %s %s/%s: %w", gvk.Kind, namespace, name, err)
	}
	return nil
}
