package controller

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/apply"
	"github.com/sluicehq/sluice/internal/quota"
)

// ClusterQueueReconciler keeps a ClusterQueue's Active condition true to what
// it references (flavors, admission checks, its cohort chain) and holds its
// deletion while workloads still reserve quota in it.
type ClusterQueueReconciler struct {
	Client  client.Client
	Tracker *apply.Tracker
}

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=clusterqueues,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=clusterqueues/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=clusterqueues/finalizers,verbs=update
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=admissionchecks,verbs=get;list;watch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads,verbs=get;list;watch

func (r *ClusterQueueReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return ignoreConflict(r.reconcile(ctx, req))
}

func (r *ClusterQueueReconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cq := &kueue.ClusterQueue{}
	if err := r.Client.Get(ctx, req.NamespacedName, cq); err != nil {
		if apierrors.IsNotFound(err) {
			r.Tracker.DeleteClusterQueue(req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !cq.DeletionTimestamp.IsZero() {
		reserving := &kueue.WorkloadList{}
		if err := r.Client.List(ctx, reserving, client.MatchingFields{indexWorkloadReservedIn: cq.Name}, client.Limit(1)); err != nil {
			return ctrl.Result{}, fmt.Errorf("listing workloads reserving in %s: %w", cq.Name, err)
		}
		if len(reserving.Items) == 0 {
			return ctrl.Result{}, removeFinalizer(ctx, r.Client, cq)
		}
	} else if err := ensureFinalizer(ctx, r.Client, cq); err != nil {
		return ctrl.Result{}, err
	}
	facts, err := r.gatherFacts(ctx, cq)
	if err != nil {
		return ctrl.Result{}, err
	}
	active := clusterQueueActive(cq, facts)
	r.Tracker.SetClusterQueue(cq, active)
	return ctrl.Result{}, setActiveCondition(ctx, r.Client, cq, &cq.Status.Conditions, active)
}

// clusterQueueFacts is what the Active verdict depends on beyond the queue.
type clusterQueueFacts struct {
	missingFlavors []string
	missingChecks  []string
	inactiveChecks []string
	// topologyFlavors name a Topology: topology-aware scheduling is not
	// implemented, and ignoring it would place pods without it.
	topologyFlavors []string
	cohortCycle     []string
}

func (r *ClusterQueueReconciler) gatherFacts(ctx context.Context, cq *kueue.ClusterQueue) (clusterQueueFacts, error) {
	var f clusterQueueFacts
	for _, name := range flavorNames(cq.Spec.ResourceGroups) {
		rf := &kueue.ResourceFlavor{}
		exists, err := objectExists(ctx, r.Client, name, rf)
		switch {
		case err != nil:
			return f, err
		case !exists:
			f.missingFlavors = append(f.missingFlavors, name)
		case rf.Spec.TopologyName != nil:
			f.topologyFlavors = append(f.topologyFlavors, fmt.Sprintf("%s (topology %s)", name, *rf.Spec.TopologyName))
		}
	}
	for _, name := range admissionCheckNames(cq) {
		ac := &kueue.AdmissionCheck{}
		if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, ac); err != nil {
			if !apierrors.IsNotFound(err) {
				return f, fmt.Errorf("reading AdmissionCheck %s: %w", name, err)
			}
			f.missingChecks = append(f.missingChecks, name)
			continue
		}
		if !meta.IsStatusConditionTrue(ac.Status.Conditions, kueue.ConditionActive) {
			f.inactiveChecks = append(f.inactiveChecks, name)
		}
	}
	ancestry, err := cohortAncestry(ctx, r.Client, string(cq.Spec.CohortName))
	if err != nil {
		return f, err
	}
	f.cohortCycle = ancestry.Cycle
	return f, nil
}

// clusterQueueActive is the verdict, most fundamental reason first.
func clusterQueueActive(cq *kueue.ClusterQueue, f clusterQueueFacts) metav1.Condition {
	inactive := inactiveCondition("Can't admit new workloads: ")
	switch {
	case !cq.DeletionTimestamp.IsZero():
		return inactive(kueue.ReasonTerminating, "the ClusterQueue is being deleted")
	case cq.Spec.StopPolicy != nil && *cq.Spec.StopPolicy != kueue.StopPolicyNone:
		return inactive(kueue.ReasonStopped, "stopPolicy is %s", *cq.Spec.StopPolicy)
	case len(f.missingFlavors) > 0:
		return inactive(kueue.ReasonFlavorNotFound, "ResourceFlavor %s not found", strings.Join(f.missingFlavors, ", "))
	case len(f.cohortCycle) > 0:
		return inactive(kueue.ReasonCohortCycle, "cohort %s is in a cycle: %s", cq.Spec.CohortName, describeCycle(f.cohortCycle))
	case len(f.missingChecks) > 0:
		return inactive(kueue.ReasonAdmissionCheckNotFound, "AdmissionCheck %s not found", strings.Join(f.missingChecks, ", "))
	case len(f.topologyFlavors) > 0:
		return inactive(kueue.ReasonNotImplemented, "ResourceFlavor %s: sluice does not implement topology-aware scheduling yet",
			strings.Join(f.topologyFlavors, ", "))
	case len(f.inactiveChecks) > 0:
		return inactive(kueue.ReasonAdmissionCheckInactive, "AdmissionCheck %s is not active", strings.Join(f.inactiveChecks, ", "))
	}
	return metav1.Condition{Type: kueue.ConditionActive, Status: metav1.ConditionTrue, Reason: kueue.ReasonReady,
		Message: "Can admit new workloads"}
}

// inactiveCondition returns a constructor of Active=False conditions whose
// messages start with prefix.
func inactiveCondition(prefix string) func(reason, format string, args ...any) metav1.Condition {
	return func(reason, format string, args ...any) metav1.Condition {
		return metav1.Condition{Type: kueue.ConditionActive, Status: metav1.ConditionFalse, Reason: reason,
			Message: prefix + fmt.Sprintf(format, args...)}
	}
}

// describeCycle renders a loop as "a -> b -> a".
func describeCycle(cycle []string) string {
	return strings.Join(append(append([]string(nil), cycle...), cycle[0]), " -> ")
}

// cohortAncestry walks the Cohort objects in the cache from a cohort upward.
func cohortAncestry(ctx context.Context, c client.Client, cohort string) (quota.Ancestry, error) {
	var readErr error
	ancestry := quota.Ancestors(cohort, func(name string) (string, bool) {
		co := &kueue.Cohort{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, co); err != nil {
			if !apierrors.IsNotFound(err) && readErr == nil {
				readErr = fmt.Errorf("reading Cohort %s: %w", name, err)
			}
			return "", false
		}
		return string(co.Spec.ParentName), true
	})
	return ancestry, readErr
}

func objectExists(ctx context.Context, c client.Client, name string, obj client.Object) (bool, error) {
	if err := c.Get(ctx, client.ObjectKey{Name: name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("reading %T %s: %w", obj, name, err)
	}
	return true, nil
}

// setActiveCondition writes the condition only when it changes, so unchanged
// verdicts cost no API call.
func setActiveCondition(ctx context.Context, c client.Client, obj client.Object, conditions *[]metav1.Condition, cond metav1.Condition) error {
	if existing := meta.FindStatusCondition(*conditions, cond.Type); existing != nil &&
		existing.Status == cond.Status && existing.Reason == cond.Reason && existing.Message == cond.Message &&
		existing.ObservedGeneration == obj.GetGeneration() {
		return nil
	}
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	cond.ObservedGeneration = obj.GetGeneration()
	meta.SetStatusCondition(conditions, cond)
	if err := c.Status().Patch(ctx, obj, patch); err != nil {
		return fmt.Errorf("updating the %s condition of %s: %w", cond.Type, obj.GetName(), err)
	}
	return nil
}

// SetupWithManager watches ClusterQueues and everything their verdict
// depends on.
func (r *ClusterQueueReconciler) SetupWithManager(mgr ctrl.Manager) error {
	c := mgr.GetClient()
	byIndex := func(field string) handler.EventHandler {
		return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return clusterQueuesMatching(ctx, c, client.MatchingFields{field: o.GetName()})
		})
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&kueue.ClusterQueue{}).
		Watches(&kueue.ResourceFlavor{}, byIndex(indexClusterQueueFlavors)).
		Watches(&kueue.AdmissionCheck{}, byIndex(indexClusterQueueChecks)).
		// A cohort change can open or close a cycle anywhere below it; cohort
		// changes are rare, so every queue in a cohort is looked at again.
		Watches(&kueue.Cohort{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
			return clusterQueuesInCohorts(ctx, c)
		})).
		Watches(&kueue.Workload{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return deletingClusterQueueOf(ctx, c, o.(*kueue.Workload))
		})).
		Named("clusterqueue").
		Complete(r)
}

func clusterQueuesMatching(ctx context.Context, c client.Client, opts ...client.ListOption) []reconcile.Request {
	list := &kueue.ClusterQueueList{}
	if err := c.List(ctx, list, opts...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing ClusterQueues to requeue")
		return nil
	}
	names := make([]string, 0, len(list.Items))
	for _, cq := range list.Items {
		names = append(names, cq.Name)
	}
	return requestsFor(names)
}

// clusterQueuesInCohorts lists every ClusterQueue that belongs to a cohort.
func clusterQueuesInCohorts(ctx context.Context, c client.Client) []reconcile.Request {
	list := &kueue.ClusterQueueList{}
	if err := c.List(ctx, list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing ClusterQueues to requeue")
		return nil
	}
	var names []string
	for _, cq := range list.Items {
		if cq.Spec.CohortName != "" {
			names = append(names, cq.Name)
		}
	}
	return requestsFor(names)
}

// deletingClusterQueueOf wakes a ClusterQueue held by its finalizer when one
// of its workloads changes; live queues don't need workload events.
func deletingClusterQueueOf(ctx context.Context, c client.Client, wl *kueue.Workload) []reconcile.Request {
	if wl.Status.Admission == nil {
		return nil
	}
	cq := &kueue.ClusterQueue{}
	if err := c.Get(ctx, client.ObjectKey{Name: string(wl.Status.Admission.ClusterQueue)}, cq); err != nil || cq.DeletionTimestamp.IsZero() {
		return nil
	}
	return requestsFor([]string{cq.Name})
}
