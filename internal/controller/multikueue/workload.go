package multikueue

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
	"github.com/sluicehq/sluice/internal/patch"
	"github.com/sluicehq/sluice/internal/workload"
)

// WorkloadReconciler dispatches the Workloads of the manager cluster
// whose ClusterQueue has a MultiKueue check. Once quota is reserved here,
// it copies the Workload to the workers its dispatcher nominates; the
// first copy a worker reserves quota for wins, the others are deleted,
// the job is created in that worker, and the check turns Ready naming the
// worker in status.clusterName. From then on it mirrors the worker's job
// status onto the local job (whose Finished ends the local Workload),
// and it deletes the remote objects when the reservation here ends.
type WorkloadReconciler struct {
	Client client.Client
	// Workloads writes the local Workloads' status, in order with sluice's
	// admission writes of each.
	Workloads  integration.WorkloadStatusWriter
	Remotes    *Remotes
	Clock      clock.Clock
	Dispatcher Dispatcher
	// Origin is the origin label's value on the objects made in workers.
	Origin string
	// WorkerLostTimeout: a worker inactive this long loses its workloads,
	// which queue again here to be dispatched elsewhere.
	WorkerLostTimeout time.Duration
	// Adapters are the kinds that can be dispatched, by GroupVersionKind.
	Adapters map[schema.GroupVersionKind]integration.RemoteAdapter
}

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads,verbs=get;list;watch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=batch,resources=jobs/status,verbs=get;update;patch

// dispatch is what one reconcile knows of a workload.
type dispatch struct {
	wl    *kueue.Workload
	check kueue.AdmissionCheckState
	// clusters are the workers of the check's config, by name (nil when
	// the MultiKueueCluster doesn't exist).
	clusters map[string]*kueue.MultiKueueCluster
}

func (r *WorkloadReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	wl := &kueue.Workload{}
	if err := r.Client.Get(ctx, req.NamespacedName, wl); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, r.deleteRemotes(ctx, req.NamespacedName, r.connected())
		}
		return ctrl.Result{}, err
	}
	d, ok, err := r.load(ctx, wl)
	if err != nil || !ok {
		return ctrl.Result{}, err
	}
	if workload.IsFinished(wl) && wl.Status.ClusterName != nil {
		if waiting, err := r.mirrorLast(ctx, wl); err != nil || waiting {
			return ctrl.Result{}, err
		}
	}
	if workload.IsFinished(wl) || !workload.HasQuotaReservation(wl) || workload.IsEvicting(wl) || !wl.DeletionTimestamp.IsZero() {
		// The dispatch ends with the reservation here.
		if err := r.deleteRemotes(ctx, req.NamespacedName, r.connected()); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, r.clearLocalJob(ctx, wl)
	}
	if d.check.State == kueue.CheckStateRetry || d.check.State == kueue.CheckStateRejected {
		return ctrl.Result{}, nil // decided: package controller evicts or deactivates
	}
	local, adapter, why, err := r.localJob(ctx, wl)
	if err != nil {
		return ctrl.Result{}, err
	}
	if why != "" {
		return ctrl.Result{}, r.setCheck(ctx, d, kueue.CheckStateRejected, why, nil)
	}
	if d.check.State == kueue.CheckStateReady && wl.Status.ClusterName != nil {
		return r.follow(ctx, d, local, adapter)
	}
	// Not dispatched (again, after an eviction in a worker): the local job,
	// stopped, must not keep claiming the worker's pods.
	if err := r.clearLocalJob(ctx, wl); err != nil {
		return ctrl.Result{}, err
	}
	return r.dispatch(ctx, d, local, adapter)
}

// load finds the workload's MultiKueue check and the clusters of its
// config; ok is false when it has none.
func (r *WorkloadReconciler) load(ctx context.Context, wl *kueue.Workload) (dispatch, bool, error) {
	d := dispatch{wl: wl, clusters: map[string]*kueue.MultiKueueCluster{}}
	for _, state := range wl.Status.AdmissionChecks {
		ac := &kueue.AdmissionCheck{}
		if err := r.Client.Get(ctx, client.ObjectKey{Name: state.Name}, ac); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return d, false, fmt.Errorf("reading AdmissionCheck %s: %w", state.Name, err)
		}
		if ac.Spec.ControllerName != kueue.MultiKueueControllerName {
			continue
		}
		d.check = state
		cfg, err := configOf(ctx, r.Client, ac)
		if err != nil {
			// An inactive check: its ClusterQueue reserves nothing new.
			return d, true, client.IgnoreNotFound(errIgnoreBadParameters(err))
		}
		for _, name := range cfg.Spec.Clusters {
			mkc := &kueue.MultiKueueCluster{}
			if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, mkc); err != nil {
				if apierrors.IsNotFound(err) {
					continue
				}
				return d, false, fmt.Errorf("reading MultiKueueCluster %s: %w", name, err)
			}
			d.clusters[name] = mkc
		}
		return d, true, nil
	}
	return d, false, nil
}

func errIgnoreBadParameters(err error) error {
	if err == errBadParameters {
		return nil
	}
	return err
}

// localJob is the workload's job and its kind's adapter; why says why it
// can't be dispatched (the check is then rejected).
func (r *WorkloadReconciler) localJob(ctx context.Context, wl *kueue.Workload) (client.Object, integration.RemoteAdapter, string, error) {
	owner := metav1.GetControllerOf(wl)
	if owner == nil {
		return nil, nil, "the Workload has no job: only jobs can be dispatched to worker clusters", nil
	}
	gvk := schema.FromAPIVersionAndKind(owner.APIVersion, owner.Kind)
	adapter, ok := r.Adapters[gvk]
	if !ok {
		return nil, nil, fmt.Sprintf("sluice can't dispatch %s to worker clusters", gvk.GroupKind()), nil
	}
	local := adapter.NewObject()
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: wl.Namespace, Name: owner.Name}, local); err != nil {
		return nil, nil, "", fmt.Errorf("reading %s %s: %w", gvk.Kind, owner.Name, err)
	}
	if !adapter.Dispatched(local) {
		return nil, nil, fmt.Sprintf("%s %s is not managed by %s (spec.managedBy): it would run in this cluster too", gvk.Kind, owner.Name, kueue.MultiKueueControllerName), nil
	}
	return local, adapter, "", nil
}

// dispatch offers the workload to its nominated workers and, once one of
// them reserved quota, creates the job there and makes the check Ready.
func (r *WorkloadReconciler) dispatch(ctx context.Context, d dispatch, local client.Object, adapter integration.RemoteAdapter) (ctrl.Result, error) {
	now := r.Clock.Now()
	key := client.ObjectKeyFromObject(d.wl)
	nominated, next := r.Dispatcher.nominate(r.usable(d), d.check.LastTransitionTime.Time, now)
	copies := map[string]*kueue.Workload{}
	var failures []string
	for _, cluster := range nominated {
		cached, _, _ := r.Remotes.Client(cluster)
		remote := &kueue.Workload{}
		err := cached.Get(ctx, key, remote)
		switch {
		case apierrors.IsNotFound(err):
			if err := cached.Create(ctx, remoteWorkload(d.wl, r.Origin)); err != nil && !apierrors.IsAlreadyExists(err) {
				failures = append(failures, fmt.Sprintf("%s: %v", cluster, err))
			}
		case err != nil:
			failures = append(failures, fmt.Sprintf("%s: %v", cluster, err))
		case remote.Annotations[kueue.MultiKueueOriginUIDAnnotation] != string(d.wl.UID):
			// A copy of an earlier Workload of that name: it goes first.
			if err := r.deleteRemotes(ctx, key, []string{cluster}); err != nil {
				failures = append(failures, fmt.Sprintf("%s: %v", cluster, err))
			}
		default:
			copies[cluster] = remote
		}
	}
	won := winner(copies)
	// Copies outside the nomination (or all but the winner's) go.
	var others []string
	for _, cluster := range r.connected() {
		if (won != "" && cluster != won) || (won == "" && !slices.Contains(nominated, cluster)) {
			others = append(others, cluster)
		}
	}
	if err := r.deleteRemotes(ctx, key, others); err != nil {
		return ctrl.Result{}, err
	}
	if won == "" {
		message := fmt.Sprintf("Waiting for a worker to reserve quota; dispatched to %s", describe(nominated))
		if len(failures) > 0 {
			message += "; failed: " + strings.Join(failures, "; ")
		}
		if err := r.setCheck(ctx, d, kueue.CheckStatePending, message, nominated); err != nil {
			return ctrl.Result{}, err
		}
		if !next.IsZero() {
			return ctrl.Result{RequeueAfter: next.Sub(now)}, nil
		}
		return ctrl.Result{}, nil
	}
	if err := r.createRemoteJob(ctx, won, d.wl, local, adapter); err != nil {
		return ctrl.Result{}, err
	}
	wl := d.wl
	dispatched := patch.Always(func() {
		wl.Status.ClusterName = ptr.To(won)
		wl.Status.NominatedClusterNames = nil
		setState(wl, d.check.Name, kueue.CheckStateReady, fmt.Sprintf("The workload got reservation on %q", won), now)
	})
	if _, err := r.Workloads.Status(ctx, wl, "multikueue-dispatched", dispatched); err != nil {
		return ctrl.Result{}, fmt.Errorf("recording the dispatch of Workload %s to %s: %w", wl.Name, won, err)
	}
	return ctrl.Result{}, nil
}

// follow watches a dispatched workload: the worker it runs in must stay
// reachable, and keep its copy reserved; the job's status comes back.
func (r *WorkloadReconciler) follow(ctx context.Context, d dispatch, local client.Object, adapter integration.RemoteAdapter) (ctrl.Result, error) {
	now := r.Clock.Now()
	key := client.ObjectKeyFromObject(d.wl)
	cluster := *d.wl.Status.ClusterName
	others := slices.DeleteFunc(r.connected(), func(c string) bool { return c == cluster })
	if err := r.deleteRemotes(ctx, key, others); err != nil {
		return ctrl.Result{}, err // a worker back from the dead runs nothing twice
	}
	mkc, known := d.clusters[cluster]
	cached, _, connected := r.Remotes.Client(cluster)
	if !known || !connected {
		if known {
			if gone, at := lost(mkc, r.WorkerLostTimeout, now); !gone {
				if at.IsZero() {
					return ctrl.Result{RequeueAfter: time.Second}, nil // a connection under way
				}
				return ctrl.Result{RequeueAfter: at.Sub(now)}, nil
			}
		}
		message := fmt.Sprintf("Worker %q was lost (unreachable for more than %s): the workload queues again to be dispatched elsewhere", cluster, r.WorkerLostTimeout)
		if !known {
			message = fmt.Sprintf("Worker %q is no longer in the MultiKueueConfig: the workload queues again", cluster)
		}
		return ctrl.Result{}, r.setCheck(ctx, d, kueue.CheckStateRetry, message, nil)
	}
	remote := &kueue.Workload{}
	err := cached.Get(ctx, key, remote)
	if client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, err
	}
	if apierrors.IsNotFound(err) || !workload.HasQuotaReservation(remote) || workload.IsEvicting(remote) {
		// Evicted (or deleted) in the worker: dispatch again, keeping
		// the reservation here.
		if err := r.deleteRemotes(ctx, key, []string{cluster}); err != nil {
			return ctrl.Result{}, err
		}
		wl := d.wl
		again := patch.Always(func() {
			wl.Status.ClusterName = nil
			setState(wl, d.check.Name, kueue.CheckStatePending, fmt.Sprintf("The workload lost its reservation in worker %q: dispatching again", cluster), now)
		})
		if _, err := r.Workloads.Status(ctx, wl, "multikueue-redispatch", again); err != nil {
			return ctrl.Result{}, fmt.Errorf("dispatching Workload %s again: %w", wl.Name, err)
		}
		return ctrl.Result{}, nil
	}
	remoteJob := adapter.NewObject()
	if err := cached.Get(ctx, client.ObjectKeyFromObject(local), remoteJob); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, r.createRemoteJob(ctx, cluster, d.wl, local, adapter)
		}
		return ctrl.Result{}, err
	}
	if adapter.MirrorStatus(local, remoteJob) {
		if err := r.Client.Status().Update(ctx, local); err != nil {
			return ctrl.Result{}, fmt.Errorf("mirroring the status of %s from worker %s: %w", key, cluster, err)
		}
	}
	return ctrl.Result{}, nil
}

// mirrorLast brings back the last of the worker's status of a finished
// workload's job (its final conditions and counts come after the ones
// that finished the workload); waiting tells that it is not final yet.
func (r *WorkloadReconciler) mirrorLast(ctx context.Context, wl *kueue.Workload) (bool, error) {
	local, adapter, why, err := r.localJob(ctx, wl)
	if why != "" || apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	cached, _, ok := r.Remotes.Client(*wl.Status.ClusterName)
	if !ok {
		return false, nil
	}
	remote := adapter.NewObject()
	if err := cached.Get(ctx, client.ObjectKeyFromObject(local), remote); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	if adapter.MirrorStatus(local, remote) {
		if err := r.Client.Status().Update(ctx, local); err != nil {
			return false, fmt.Errorf("mirroring the final status of %s: %w", client.ObjectKeyFromObject(local), err)
		}
	}
	return !adapter.Final(remote), nil
}

// createRemoteJob creates the job in the worker that won, queued there by
// the workload's copy (the prebuilt Workload).
func (r *WorkloadReconciler) createRemoteJob(ctx context.Context, cluster string, wl *kueue.Workload, local client.Object, adapter integration.RemoteAdapter) error {
	cached, direct, ok := r.Remotes.Client(cluster)
	if !ok {
		return fmt.Errorf("worker %s is not connected", cluster)
	}
	remote, err := adapter.RemoteCopy(local, wl.Name, r.Origin)
	if err != nil {
		return fmt.Errorf("copying %s for worker %s: %w", client.ObjectKeyFromObject(local), cluster, err)
	}
	err = cached.Create(ctx, remote)
	if apierrors.IsAlreadyExists(err) {
		// Ours from an earlier pass, or someone else's of the same name,
		// which is neither used nor replaced.
		existing := adapter.NewObject()
		if err := direct.Get(ctx, client.ObjectKeyFromObject(remote), existing); err != nil {
			return fmt.Errorf("reading %s in worker %s: %w", client.ObjectKeyFromObject(remote), cluster, err)
		}
		if existing.GetLabels()[kueue.MultiKueueOriginLabel] != r.Origin || existing.GetLabels()[kueue.PrebuiltWorkloadLabel] != wl.Name {
			return fmt.Errorf("worker %s has a %T named %s that this manager did not make: it can't run the dispatched job",
				cluster, existing, client.ObjectKeyFromObject(remote))
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("creating %s in worker %s: %w", client.ObjectKeyFromObject(remote), cluster, err)
	}
	return nil
}

// clearLocalJob forgets, on a stopped local job, the pods that ran in a
// worker (so that it can be restored and queue again).
func (r *WorkloadReconciler) clearLocalJob(ctx context.Context, wl *kueue.Workload) error {
	if workload.IsFinished(wl) {
		return nil
	}
	local, adapter, why, err := r.localJob(ctx, wl)
	if why != "" || apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !adapter.ClearStatus(local) {
		return nil
	}
	if err := r.Client.Status().Update(ctx, local); err != nil {
		return fmt.Errorf("clearing the worker's status from %s: %w", client.ObjectKeyFromObject(local), err)
	}
	return nil
}

// usable are the workers of the workload's config that are active and
// connected.
func (r *WorkloadReconciler) usable(d dispatch) []string {
	var out []string
	for name, mkc := range d.clusters {
		if _, _, ok := r.Remotes.Client(name); ok && meta.IsStatusConditionTrue(mkc.Status.Conditions, kueue.MultiKueueClusterActive) {
			out = append(out, name)
		}
	}
	return out
}

func (r *WorkloadReconciler) connected() []string { return r.Remotes.Names() }

// deleteRemotes deletes, in each of the clusters, the copy of a workload
// and its jobs. It reads from the connections' caches first: most calls
// find nothing to delete.
func (r *WorkloadReconciler) deleteRemotes(ctx context.Context, key types.NamespacedName, clusters []string) error {
	for _, cluster := range clusters {
		cached, _, ok := r.Remotes.Client(cluster)
		if !ok {
			continue
		}
		for _, adapter := range r.Adapters {
			list := adapter.NewList()
			if err := cached.List(ctx, list, client.InNamespace(key.Namespace),
				client.MatchingLabels{kueue.PrebuiltWorkloadLabel: key.Name, kueue.MultiKueueOriginLabel: r.Origin}); err != nil {
				return fmt.Errorf("listing the jobs of %s in worker %s: %w", key, cluster, err)
			}
			if err := meta.EachListItem(list, func(o runtime.Object) error {
				job := o.(client.Object)
				err := cached.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground))
				if client.IgnoreNotFound(err) != nil {
					return fmt.Errorf("deleting %s in worker %s: %w", client.ObjectKeyFromObject(job), cluster, err)
				}
				return nil
			}); err != nil {
				return err
			}
		}
		remote := &kueue.Workload{}
		if err := cached.Get(ctx, key, remote); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return fmt.Errorf("reading Workload %s in worker %s: %w", key, cluster, err)
		}
		if remote.Labels[kueue.MultiKueueOriginLabel] != r.Origin {
			continue
		}
		if err := cached.Delete(ctx, remote); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting Workload %s in worker %s: %w", key, cluster, err)
		}
	}
	return nil
}

// setCheck writes the MultiKueue check's state (and the nominated
// workers), when they change.
func (r *WorkloadReconciler) setCheck(ctx context.Context, d dispatch, state kueue.CheckState, message string, nominated []string) error {
	wl := d.wl
	if d.check.State == state && d.check.Message == message && slices.Equal(wl.Status.NominatedClusterNames, nominated) {
		return nil
	}
	check := patch.Always(func() {
		setState(wl, d.check.Name, state, message, r.Clock.Now())
		wl.Status.NominatedClusterNames = nominated
	})
	if _, err := r.Workloads.Status(ctx, wl, "multikueue-check", check); err != nil {
		return fmt.Errorf("updating the MultiKueue check of Workload %s: %w", wl.Name, err)
	}
	return nil
}

func setState(wl *kueue.Workload, name string, state kueue.CheckState, message string, now time.Time) {
	for i := range wl.Status.AdmissionChecks {
		c := &wl.Status.AdmissionChecks[i]
		if c.Name != name {
			continue
		}
		if c.State != state {
			c.LastTransitionTime = metav1.NewTime(now)
		}
		c.State, c.Message = state, message
	}
}

// remoteWorkload is the copy of a workload made in a worker.
func remoteWorkload(local *kueue.Workload, origin string) *kueue.Workload {
	labels := maps.Clone(local.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[kueue.MultiKueueOriginLabel] = origin
	annotations := maps.Clone(local.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[kueue.MultiKueueOriginUIDAnnotation] = string(local.UID)
	return &kueue.Workload{
		ObjectMeta: metav1.ObjectMeta{Namespace: local.Namespace, Name: local.Name, Labels: labels, Annotations: annotations},
		Spec:       *local.Spec.DeepCopy(),
	}
}

func describe(clusters []string) string {
	if len(clusters) == 0 {
		return "no worker (none is active)"
	}
	return strings.Join(clusters, ", ")
}

// dispatchConcurrency is how many Workloads are dispatched at once.
const dispatchConcurrency = 8

// dispatchIndex indexes the reserved Workloads with admission checks by
// the worker they run in ("cluster:<name>"), or as undispatched.
const dispatchIndex = "multikueue.dispatch"

const undispatched = "undispatched"

func dispatchKeys(o client.Object) []string {
	wl, ok := o.(*kueue.Workload)
	if !ok || len(wl.Status.AdmissionChecks) == 0 || !workload.HasQuotaReservation(wl) {
		return nil
	}
	if wl.Status.ClusterName != nil {
		return []string{"cluster:" + *wl.Status.ClusterName}
	}
	return []string{undispatched}
}

func (r *WorkloadReconciler) workloadsOf(ctx context.Context, mkc client.Object) []reconcile.Request {
	var out []reconcile.Request
	for _, key := range []string{"cluster:" + mkc.GetName(), undispatched} {
		list := &kueue.WorkloadList{}
		if err := r.Client.List(ctx, list, client.MatchingFields{dispatchIndex: key}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing the Workloads of a worker", "multiKueueCluster", mkc.GetName())
			return nil
		}
		for i := range list.Items {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}

// SetupWithManager watches the Workloads that have admission checks (or
// had: one whose reservation ended must have its copies deleted), and the
// changes of the objects made in workers.
func (r *WorkloadReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Workloads == nil {
		return errors.New("the MultiKueue workload reconciler has no Workload status writer")
	}
	hasChecks := func(o client.Object) bool {
		wl, ok := o.(*kueue.Workload)
		return ok && len(wl.Status.AdmissionChecks) > 0
	}
	relevant := predicate.Funcs{
		CreateFunc:  func(e event.CreateEvent) bool { return hasChecks(e.Object) },
		UpdateFunc:  func(e event.UpdateEvent) bool { return hasChecks(e.ObjectOld) || hasChecks(e.ObjectNew) },
		DeleteFunc:  func(e event.DeleteEvent) bool { return hasChecks(e.Object) },
		GenericFunc: func(e event.GenericEvent) bool { return hasChecks(e.Object) },
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &kueue.Workload{}, dispatchIndex, dispatchKeys); err != nil {
		return fmt.Errorf("indexing Workloads by worker: %w", err)
	}
	b := ctrl.NewControllerManagedBy(mgr).
		For(&kueue.Workload{}, builder.WithPredicates(relevant)).
		WatchesRawSource(source.Channel(r.Remotes.Events(), &handler.EnqueueRequestForObject{})).
		// A worker turning inactive (lost, after a while) or active (one
		// more to offer the waiting workloads to) concerns its workloads
		// and those not dispatched yet.
		Watches(&kueue.MultiKueueCluster{}, handler.EnqueueRequestsFromMapFunc(r.workloadsOf))
	// A dispatched job stopped here (its Workload evicted) needs its
	// worker status cleared before it can be restored.
	for gvk, adapter := range r.Adapters {
		dispatched := predicate.NewPredicateFuncs(adapter.Dispatched)
		b = b.Watches(adapter.NewObject(), handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: integration.WorkloadName(gvk, o.GetName(), o.GetUID())}}}
		}), builder.WithPredicates(dispatched))
	}
	// Dispatching is mostly waiting on workers' API servers: several
	// Workloads at once (each one still by one reconcile at a time).
	return b.Named("multikueue-workload").WithOptions(controller.Options{MaxConcurrentReconciles: dispatchConcurrency}).Complete(r)
}
