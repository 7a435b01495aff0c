package controller

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/apply"
	"github.com/sluicehq/sluice/internal/patch"
	"github.com/sluicehq/sluice/internal/workload"
)

// WorkloadReconciler keeps admission's view of each Workload current: a
// pending one waits in the queues, an admitted one holds quota in the cache,
// a finished or deleted one gives its quota back (a deleted one whose job
// may still run only once its integration has let it go). It also takes admissions
// away when they must end: the workload was deactivated, its queue drains
// (HoldAndDrain), or it ran past maximumExecutionTimeSeconds.
type WorkloadReconciler struct {
	Client  client.Client
	Tracker *apply.Tracker
	// Workloads makes the status writes (evictions), through the one write
	// path: retried with backoff there, never racing the admitter's writes
	// of the same workload.
	Workloads *apply.Workloads
	Clock     clock.Clock
	// StopsFirst tells whether a workload's job must stop before its
	// reservation is cleared (its job integration clears it then); other
	// workloads lose the reservation in the same write as they are evicted.
	StopsFirst func(*kueue.Workload) bool
	// Retention deletes finished and deactivated workloads after a while
	// (nil: never).
	Retention *Retention
	// PodsReady is waitForPodsReady (nil: off).
	PodsReady *PodsReadyPolicy
	// StuckAfter is how long an admission check may stay not Ready before
	// the Admitted condition says for how long (0: never).
	StuckAfter time.Duration
	// shared reads the informer's own copy of a Workload, without a copy
	// (nil: read through Client). What it returns is read-only.
	shared toolscache.Store
	// deletions are the last versions of Workloads the watch showed
	// deleted, until their reconcile forgets them with it.
	deletions deletedVersions
}

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch

func (r *WorkloadReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return ignoreConflict(r.reconcile(ctx, req))
}

func (r *WorkloadReconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	wl, err := r.read(ctx, req)
	if err != nil {
		if apierrors.IsNotFound(err) {
			r.Tracker.Deleted(req.String(), r.deletions.take(req.String()))
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	r.deletions.take(req.String()) // there again: created anew under the name
	r.Tracker.Observe(wl)
	if !wl.DeletionTimestamp.IsZero() {
		if r.Tracker.StillInUse(wl) {
			// Its quota stays counted until the job's integration lets
			// the Workload go.
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, removeFinalizer(ctx, r.Client, wl.DeepCopy())
	}
	if workload.IsActive(wl) && workload.IsDeactivationTarget(wl) {
		return ctrl.Result{}, r.deactivate(ctx, wl)
	}
	if !workload.IsActive(wl) && workload.IsDeactivationTarget(wl) && !workload.HasQuotaReservation(wl) {
		// Deactivated: the mark has done its work, and must not deactivate
		// the workload again once someone reactivates it.
		r.Workloads.Update(workload.Key(wl), writeKindDeactivationTarget, clearDeactivationTarget, nil)
		return ctrl.Result{}, nil
	}
	if workload.HasQuotaReservation(wl) && !workload.IsFinished(wl) {
		return r.reconcileReserved(ctx, wl)
	}
	if res := r.reconcileBackoff(wl); !res.IsZero() {
		return res, nil
	}
	return r.retain(ctx, wl)
}

// reconcileReserved ends an admission that must end, or comes back when the
// workload's execution time runs out.
func (r *WorkloadReconciler) reconcileReserved(ctx context.Context, wl *kueue.Workload) (ctrl.Result, error) {
	now := r.Clock.Now()
	if workload.IsEvicting(wl) {
		if r.stopsFirst(wl) {
			// The job is stopping; its integration clears the reservation.
			return ctrl.Result{}, nil
		}
		// No job to wait for (any more): clear it now.
		r.Workloads.Evict(workload.Key(wl), func(wl *kueue.Workload) bool {
			if !workload.HasQuotaReservation(wl) || !workload.IsEvicting(wl) || r.stopsFirst(wl) {
				return false
			}
			workload.ClearReservation(wl, workload.IsActive(wl), r.Clock.Now())
			return true
		}, nil)
		return ctrl.Result{}, nil
	}
	if reason, _ := r.evictionReason(wl, now); reason != "" {
		r.evict(wl)
		return ctrl.Result{}, nil
	}
	checksNext, ending := r.reconcileChecks(wl, now)
	if ending {
		return ctrl.Result{}, nil
	}
	readyNext, ending := r.reconcilePodsReady(wl, now)
	if ending {
		return ctrl.Result{}, nil
	}
	next := earliest(checksNext, readyNext)
	deadline, limited := workload.ExecutionDeadline(wl)
	if !limited || now.Before(deadline) {
		if limited {
			next = earliest(next, deadline)
		}
		if next.IsZero() {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{RequeueAfter: max(next.Sub(now), time.Millisecond)}, nil
	}
	// Out of time: deactivate (so it is not queued again), then evict.
	wl = wl.DeepCopy() // what was read is the informer's, read-only
	if _, err := patch.Object(ctx, r.Client, wl, patch.Always(func() { wl.Spec.Active = ptr.To(false) })); err != nil {
		return ctrl.Result{}, fmt.Errorf("deactivating workload %s: %w", wl.Name, err)
	}
	r.evict(wl)
	return ctrl.Result{}, nil
}

// evictionReason says why an admitted workload must lose its admission now.
// It reads only the workload and the clock, so that the deactivation's own
// watch event, queueing a second eviction that replaces the first, still
// names the execution time that ran out.
func (r *WorkloadReconciler) evictionReason(wl *kueue.Workload, now time.Time) (string, string) {
	if !workload.IsActive(wl) {
		if deadline, limited := workload.ExecutionDeadline(wl); limited && !now.Before(deadline) {
			return kueue.EvictedByMaximumExecutionTime, fmt.Sprintf("exceeded the maximum execution time of %ds", ptr.Deref(wl.Spec.MaximumExecutionTimeSeconds, 0))
		}
		if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadDeactivationTarget); c != nil && c.Status == metav1.ConditionTrue {
			return kueue.EvictedByDeactivation + "DueTo" + c.Reason, "The workload is deactivated: " + c.Message
		}
		return kueue.EvictedByDeactivation, "The workload is deactivated"
	}
	if cq, ok := r.Tracker.Cache.ClusterQueue(string(wl.Status.Admission.ClusterQueue)); ok && drains(cq.Spec.StopPolicy) {
		return kueue.EvictedByClusterQueueStopped, fmt.Sprintf("ClusterQueue %s is stopped with HoldAndDrain", cq.Name)
	}
	if lq, ok := r.Tracker.Cache.LocalQueue(wl.Namespace + "/" + string(wl.Spec.QueueName)); ok && drains(lq.Spec.StopPolicy) {
		return kueue.EvictedByLocalQueueStopped, fmt.Sprintf("LocalQueue %s is stopped with HoldAndDrain", lq.Name)
	}
	return "", ""
}

func (r *WorkloadReconciler) stopsFirst(wl *kueue.Workload) bool {
	return r.StopsFirst != nil && r.StopsFirst(wl)
}

func drains(p *kueue.StopPolicy) bool { return p != nil && *p == kueue.StopPolicyHoldAndDrain }

// evict queues the write that takes the admission away, its reason
// computed again on the copy written (the workload may have been
// reactivated meanwhile). A Workload created directly has no job to stop
// first; a job's Workload is only marked Evicted, and its integration
// clears the reservation once the job stopped.
func (r *WorkloadReconciler) evict(wl *kueue.Workload) {
	r.Workloads.Evict(workload.Key(wl), func(wl *kueue.Workload) bool {
		if !workload.HasQuotaReservation(wl) || workload.IsEvicting(wl) || workload.IsFinished(wl) {
			return false
		}
		reason, message := r.evictionReason(wl, r.Clock.Now())
		if reason == "" {
			return false
		}
		requeue := reason != kueue.EvictedByDeactivation && reason != kueue.EvictedByMaximumExecutionTime
		if strings.HasPrefix(reason, kueue.EvictedByDeactivation) {
			// Deactivated: the mark has done its work, and the requeue
			// count starts over should someone reactivate the workload.
			requeue = false
			clearDeactivationTarget(wl)
			wl.Status.RequeueState = nil
		}
		if r.stopsFirst(wl) {
			workload.MarkEvicted(wl, reason, message, r.Clock.Now())
		} else {
			workload.SetEvicted(wl, reason, message, requeue, r.Clock.Now())
		}
		return true
	}, r.Workloads.CountEviction)
}

// read returns the Workload of req, read-only: the informer's own copy when
// it can. The reconciler keeps every pending Workload it reads (the queues
// hold them), and a copy of each would double the memory of a backlog.
func (r *WorkloadReconciler) read(ctx context.Context, req ctrl.Request) (*kueue.Workload, error) {
	if r.shared != nil {
		obj, found, err := r.shared.GetByKey(req.String())
		if err != nil {
			return nil, fmt.Errorf("reading workload %s from the informer: %w", req, err)
		}
		if !found {
			return nil, apierrors.NewNotFound(kueue.GroupVersion.WithResource("workloads").GroupResource(), req.Name)
		}
		if wl, ok := obj.(*kueue.Workload); ok {
			return wl, nil
		}
	}
	wl := &kueue.Workload{}
	return wl, r.Client.Get(ctx, req.NamespacedName, wl)
}

// SetupWithManager watches Workloads, and the queues that drain them.
func (r *WorkloadReconciler) SetupWithManager(mgr ctrl.Manager) error {
	c := mgr.GetClient()
	// Before the cache starts, this makes the informer without waiting.
	informer, err := mgr.GetCache().GetInformer(context.Background(), &kueue.Workload{})
	if err != nil {
		return fmt.Errorf("the Workload informer: %w", err)
	}
	if shared, ok := informer.(toolscache.SharedIndexInformer); ok {
		r.shared = shared.GetStore()
	}
	if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{DeleteFunc: r.deletions.note}); err != nil {
		return fmt.Errorf("watching Workload deletions: %w", err)
	}
	workloadsOf := func(ctx context.Context, opts ...client.ListOption) []reconcile.Request {
		list := &kueue.WorkloadList{}
		if err := c.List(ctx, list, opts...); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing workloads of a draining queue")
			return nil
		}
		reqs := make([]reconcile.Request, 0, len(list.Items))
		for i := range list.Items {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
		return reqs
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&kueue.Workload{}).
		Watches(&kueue.ClusterQueue{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			if !drains(o.(*kueue.ClusterQueue).Spec.StopPolicy) {
				return nil
			}
			return workloadsOf(ctx, client.MatchingFields{indexWorkloadReservedIn: o.GetName()})
		})).
		Watches(&kueue.LocalQueue{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			if !drains(o.(*kueue.LocalQueue).Spec.StopPolicy) {
				return nil
			}
			return workloadsOf(ctx, client.InNamespace(o.GetNamespace()), client.MatchingFields{indexWorkloadQueueName: o.GetName()})
		})).
		Named("workload").
		Complete(r)
}
