package integration

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/patch"
	"github.com/sluicehq/sluice/internal/workload"
)

// Event reasons on jobs, as `kubectl describe` shows them.
const (
	EventCreatedWorkload = "CreatedWorkload"
	EventDeletedWorkload = "DeletedWorkload"
	EventRetracked       = "Retracked"
	EventStarted         = "Started"
	EventStopped         = "Stopped"
	EventSuspended       = "Suspended"
	EventFinished        = "Finished"
	EventFailedToStart   = "FailedToStart"
	EventWorkloadInvalid = "InvalidWorkload"
)

// retryUnresolvable is how long a job whose Workload can't be built (a
// missing priority class, a prebuilt Workload not there yet) waits before
// it is looked at again.
const retryUnresolvable = 30 * time.Second

// Reconciler owns the Workload lifecycle of one kind's jobs: it creates the
// Workload, starts the job when the Workload is admitted, stops it and
// gives the quota back on eviction, and finishes the Workload with the job.
type Reconciler struct {
	Client client.Client
	// Workloads writes the status of the job's Workloads, in order with
	// sluice's own admission writes of each.
	Workloads WorkloadStatusWriter
	// APIReader reads priority classes, which the manager doesn't cache.
	APIReader client.Reader
	Kind      Kind
	Policy    *Policy
	Recorder  recorder.EventRecorder
	Clock     clock.Clock
	// LabelKeysToCopy are the job labels its Workload gets
	// (integrations.labelKeysToCopy).
	LabelKeysToCopy []string
}

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=resourceflavors;localqueues,verbs=get;list;watch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloadpriorityclasses,verbs=get
// +kubebuilder:rbac:groups=scheduling.k8s.io,resources=priorityclasses,verbs=get
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch;update

func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return IgnoreConflict(r.reconcile(ctx, req))
}

// IgnoreConflict drops a write conflict: the cache was behind, and the
// newer version comes back through the watch.
func IgnoreConflict(res ctrl.Result, err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) {
		return res, nil
	}
	return res, err
}

func (r *Reconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if r.Kind.Group != nil {
		return r.reconcileGroup(ctx, req)
	}
	obj := r.Kind.NewObject()
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		if retracked, err := r.retrack(ctx, req.NamespacedName); retracked || err != nil {
			return ctrl.Result{}, err
		}
		return r.deleteWorkloads(ctx, req.NamespacedName, "")
	}
	// A job being deleted gives its quota back at once, whatever the
	// propagation policy (batch Jobs orphan their dependents by default).
	// Workloads of an earlier job of the same name are orphans.
	// A kind with a finalizer (Pods) keeps its Workload, finished, until the
	// object is gone.
	job := r.Kind.Wrap(obj)
	if resolver, ok := job.(Resolver); ok {
		if err := resolver.Resolve(ctx, r.Client); err != nil {
			return ctrl.Result{}, err
		}
	}
	deleting := !obj.GetDeletionTimestamp().IsZero()
	keep := obj.GetUID()
	if deleting && r.Kind.Finalizer == "" {
		keep = ""
	}
	if res, err := r.deleteWorkloads(ctx, req.NamespacedName, keep); err != nil || keep == "" {
		return res, err
	}
	if deleting {
		return ctrl.Result{}, r.finalize(ctx, job)
	}
	if job.ManagedElsewhere() != "" {
		return ctrl.Result{}, nil
	}
	decision, err := r.decide(ctx, obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !decision.Managed {
		return ctrl.Result{}, r.dropUnqueued(ctx, job)
	}
	wl, res, err := r.ensureWorkload(ctx, job, decision.QueueName)
	if wl == nil || err != nil {
		return res, err
	}
	return r.drive(ctx, job, wl, decision.QueueName)
}

// drive takes a job and its Workload one step along their shared
// lifecycle: start on admission, stop and give the quota back on eviction,
// finish with the job. Every shape of job (one object, a group of members)
// goes through it.
func (r *Reconciler) drive(ctx context.Context, job Job, wl *kueue.Workload, queue string) (ctrl.Result, error) {
	if !wl.DeletionTimestamp.IsZero() {
		// Someone deleted the Workload of a live job: the job stops before
		// the Workload (and its quota) goes; a new one is created after.
		return ctrl.Result{}, r.releaseDeleted(ctx, job, wl)
	}
	if done, succeeded, message := job.Finished(); done {
		reason := FinishedReasonSucceeded
		if !succeeded {
			reason = FinishedReasonFailed
		}
		if err := r.finish(ctx, job, wl, reason, message); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, r.release(ctx, job)
	}
	switch {
	case workload.IsFinished(wl):
		// Finished without the job (e.g. deactivated for good): keep it stopped.
		_, err := r.stopJob(ctx, job, "its Workload is finished")
		return ctrl.Result{}, err
	case workload.IsEvicting(wl):
		return r.evict(ctx, job, wl, queue)
	case workload.HasQuotaReservation(wl) && beyondAdmission(job, wl) != "":
		// Edited after its quota was reserved (e.g. parallelism raised
		// while it runs, or while its admission checks are pending): it
		// must not run beyond that quota. It stops, and the Workload
		// queues again with the new shape.
		return ctrl.Result{}, r.evictChanged(ctx, job, wl, beyondAdmission(job, wl))
	case workload.HasQuotaReservation(wl) && workload.IsAdmitted(wl):
		if job.IsSuspended() {
			return ctrl.Result{}, r.start(ctx, job, wl)
		}
		if g, ok := job.(Group); ok && g.Waiting() {
			// Members that joined a running group (replacements) start
			// in the places the admission still has.
			if err := r.start(ctx, job, wl); err != nil {
				return ctrl.Result{}, err
			}
		}
		if err := r.syncReclaimable(ctx, job, wl); err != nil {
			return ctrl.Result{}, err
		}
		if counter, ok := job.(ReadyCounter); ok {
			return ctrl.Result{}, SyncPodsReady(ctx, r.Workloads, wl, counter.ReadyPods(), r.Clock.Now())
		}
		return ctrl.Result{}, nil
	default:
		_, err := r.stopJob(ctx, job, fmt.Sprintf("it waits in LocalQueue %q for its Workload %s to be admitted", wl.Spec.QueueName, wl.Name))
		return ctrl.Result{}, err
	}
}

// retrack handles an object missing from the manager's cache that still
// exists with the kind's finalizer: its tracking labels were removed (the
// webhook refuses that; this is for a bypassed or absent webhook). Taking
// it for deleted would free its quota while it runs, so the labels go
// back, and the object returns to the cache.
func (r *Reconciler) retrack(ctx context.Context, key types.NamespacedName) (bool, error) {
	if r.Kind.Finalizer == "" || len(r.Kind.TrackingLabels) == 0 {
		return false, nil
	}
	obj := r.Kind.NewObject()
	if err := r.APIReader.Get(ctx, key, obj); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	if !controllerutil.ContainsFinalizer(obj, r.Kind.Finalizer) {
		return false, nil
	}
	relabel := patch.Always(func() { obj.SetLabels(mergeInto(obj.GetLabels(), r.Kind.TrackingLabels)) })
	if _, err := patch.Object(ctx, r.Client, obj, relabel); err != nil {
		return true, fmt.Errorf("putting back the labels of %s: %w", key, err)
	}
	r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, EventRetracked, "Relabel",
		"sluice put back its labels %v: the object is queued and can't leave its queue by losing them", r.Kind.TrackingLabels)
	return true, nil
}

// dropUnqueued deletes the Workloads of a suspended job that is no longer
// queued (its queue-name was removed and no other rule queues it): an
// admitted Workload without a job to start would hold quota for nothing.
// One whose job still has pods keeps its reservation until they are gone.
func (r *Reconciler) dropUnqueued(ctx context.Context, job Job) error {
	if !job.IsSuspended() {
		return nil
	}
	owned, err := r.ownedWorkloads(ctx, job.Object())
	if err != nil {
		return err
	}
	for i := range owned {
		wl := &owned[i]
		if workload.IsFinished(wl) || (workload.HasQuotaReservation(wl) && job.Active()) {
			continue
		}
		if err := r.Client.Delete(ctx, wl, client.Preconditions{UID: &wl.UID}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting Workload %s of a job no longer queued: %w", wl.Name, err)
		}
		r.Recorder.Eventf(job.Object(), wl, corev1.EventTypeNormal, EventDeletedWorkload, "DeleteWorkload",
			"Deleted Workload %s: the job is no longer queued (no queue-name)", wl.Name)
	}
	return nil
}

// ensureWorkload finds the job's Workload, or creates it, or brings it in
// line with a suspended job that changed. It returns nil when there is
// nothing more to do in this pass.
func (r *Reconciler) ensureWorkload(ctx context.Context, job Job, queue string) (*kueue.Workload, ctrl.Result, error) {
	obj := job.Object()
	if name := prebuiltName(obj); name != "" {
		return r.adoptPrebuilt(ctx, job, name)
	}
	owned, err := r.ownedWorkloads(ctx, obj)
	if err != nil {
		return nil, ctrl.Result{}, err
	}
	wl := pickWorkload(owned)
	for i := range owned {
		if &owned[i] != wl {
			if err := r.Client.Delete(ctx, &owned[i]); client.IgnoreNotFound(err) != nil {
				return nil, ctrl.Result{}, fmt.Errorf("deleting extra Workload %s: %w", owned[i].Name, err)
			}
		}
	}
	if wl == nil {
		res, err := r.createWorkload(ctx, job, queue)
		return nil, res, err
	}
	// A running job's spec carries what admission injected; only a
	// suspended, unmodified job says what its Workload should be.
	if workload.HasQuotaReservation(wl) || workload.IsFinished(wl) || !job.IsSuspended() || hasOriginals(obj) {
		return wl, ctrl.Result{}, nil
	}
	return wl, ctrl.Result{}, r.syncPendingWorkload(ctx, job, wl, queue)
}

// pickWorkload chooses among a job's Workloads the one that holds quota,
// else a finished one, else the first.
func pickWorkload(owned []kueue.Workload) *kueue.Workload {
	for _, prefer := range []func(*kueue.Workload) bool{workload.HasQuotaReservation, workload.IsFinished, func(*kueue.Workload) bool { return true }} {
		for i := range owned {
			if prefer(&owned[i]) {
				return &owned[i]
			}
		}
	}
	return nil
}

func (r *Reconciler) createWorkload(ctx context.Context, job Job, queue string) (ctrl.Result, error) {
	obj := job.Object()
	if done, _, _ := job.Finished(); done {
		// It ran to its end before sluice saw it (created while the manager
		// was down, or before it was queued): there is nothing to admit.
		return ctrl.Result{}, nil
	}
	// A job that runs must not run without quota: stop it first.
	if stopped, err := r.stopJob(ctx, job, "it waits for its Workload to be created and admitted"); !stopped || err != nil {
		return ctrl.Result{}, err
	}
	wl, err := newWorkload(ctx, r.APIReader, r.Kind, job, queue, r.LabelKeysToCopy)
	if errors.Is(err, ErrPodSetsNotBuilt) {
		ctrl.LoggerFrom(ctx).V(2).Info("waiting for the job's controller to build what its pod sets are read from", "reason", err.Error())
		return ctrl.Result{}, nil
	}
	if err != nil {
		ctrl.LoggerFrom(ctx).Info("can't build the Workload", "error", err.Error())
		r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, EventWorkloadInvalid, "CreateWorkload", "Can't build the Workload: %v", err)
		return ctrl.Result{RequeueAfter: retryUnresolvable}, nil
	}
	if err := r.Client.Create(ctx, wl); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return ctrl.Result{}, nil
		}
		if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) {
			r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, EventWorkloadInvalid, "CreateWorkload", "The API server refused the Workload: %v", err)
			return ctrl.Result{RequeueAfter: retryUnresolvable}, nil
		}
		return ctrl.Result{}, fmt.Errorf("creating Workload %s: %w", wl.Name, err)
	}
	r.Recorder.Eventf(obj, wl, corev1.EventTypeNormal, EventCreatedWorkload, "CreateWorkload", "Created Workload %s/%s in LocalQueue %q", wl.Namespace, wl.Name, queue)
	return ctrl.Result{}, nil
}

// syncPendingWorkload rebuilds a pending Workload's pod sets and queue from
// its suspended job, in one update.
func (r *Reconciler) syncPendingWorkload(ctx context.Context, job Job, wl *kueue.Workload, queue string) error {
	podSets, err := job.PodSets()
	if err != nil {
		if !errors.Is(err, ErrPodSetsNotBuilt) {
			r.Recorder.Eventf(job.Object(), nil, corev1.EventTypeWarning, EventWorkloadInvalid, "UpdateWorkload", "Can't read the pod sets: %v", err)
		}
		return nil
	}
	if samePodSets(wl.Spec.PodSets, podSets) && string(wl.Spec.QueueName) == queue {
		return nil
	}
	wl.Spec.PodSets = podSets
	wl.Spec.QueueName = kueue.LocalQueueName(queue)
	if err := r.Client.Update(ctx, wl); err != nil {
		return fmt.Errorf("updating Workload %s from its job: %w", wl.Name, err)
	}
	return nil
}

func prebuiltName(obj client.Object) string {
	if name := obj.GetLabels()[kueue.PrebuiltWorkloadLabel]; name != "" {
		return name
	}
	return obj.GetAnnotations()[kueue.PrebuiltWorkloadLabel]
}

// adoptPrebuilt uses the Workload the job names: the job waits until it
// exists, then becomes its controller owner.
func (r *Reconciler) adoptPrebuilt(ctx context.Context, job Job, name string) (*kueue.Workload, ctrl.Result, error) {
	obj := job.Object()
	wl := &kueue.Workload{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: name}, wl); err != nil {
		if !apierrors.IsNotFound(err) {
			return nil, ctrl.Result{}, err
		}
		_, err := r.stopJob(ctx, job, fmt.Sprintf("its prebuilt Workload %s doesn't exist yet", name))
		return nil, ctrl.Result{}, err
	}
	if owner := metav1.GetControllerOf(wl); owner == nil || owner.UID != obj.GetUID() {
		if owner != nil {
			r.Recorder.Eventf(obj, wl, corev1.EventTypeWarning, EventWorkloadInvalid, "AdoptWorkload",
				"Prebuilt Workload %s is controlled by %s %s", name, owner.Kind, owner.Name)
			return nil, ctrl.Result{RequeueAfter: retryUnresolvable}, nil
		}
		wl.OwnerReferences = append(wl.OwnerReferences, *metav1.NewControllerRef(obj, r.Kind.GVK))
		if wl.Labels == nil {
			wl.Labels = map[string]string{}
		}
		wl.Labels[kueue.JobUIDLabel] = string(obj.GetUID())
		controllerutil.AddFinalizer(wl, kueue.ResourceInUseFinalizerName)
		if err := r.Client.Update(ctx, wl); err != nil {
			return nil, ctrl.Result{}, fmt.Errorf("adopting prebuilt Workload %s: %w", name, err)
		}
		return nil, ctrl.Result{}, nil
	}
	return wl, ctrl.Result{}, nil
}

// start runs an admitted job with what admission decided, in one update
// (two for a job that InjectsWhileSuspended).
func (r *Reconciler) start(ctx context.Context, job Job, wl *kueue.Workload) error {
	obj := job.Object()
	infos, err := PodSetInfos(ctx, r.Client, wl)
	if err == nil {
		err = runWithOriginals(job, infos)
	}
	if err != nil {
		r.Recorder.Eventf(obj, wl, corev1.EventTypeWarning, EventFailedToStart, "Start", "Can't start the job with its admission: %v", err)
		if errors.Is(err, ErrConflictingUpdates) {
			// No retry makes them agree: the Workload ends, and its quota
			// with it, saying why.
			return r.finish(ctx, job, wl, FinishedReasonFailedToStart, err.Error())
		}
		return fmt.Errorf("starting %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	if wrote, err := r.write(ctx, job); err != nil || !wrote {
		return err
	}
	if u, ok := job.(InjectsWhileSuspended); ok {
		u.Unsuspend()
		if _, err := r.write(ctx, job); err != nil {
			return err
		}
	}
	r.Recorder.Eventf(obj, wl, corev1.EventTypeNormal, EventStarted, "Start", "Admitted by ClusterQueue %s, %s",
		wl.Status.Admission.ClusterQueue, describeAssignments(wl.Status.Admission))
	return nil
}

// runWithOriginals records the job's originals in an annotation (restoring
// a stale injection first) and runs it with infos.
func runWithOriginals(job Job, infos []PodSetInfo) error {
	obj := job.Object()
	if stale, err := OriginalsOf(obj); err != nil {
		return err
	} else if stale != nil {
		job.Restore(stale)
	}
	originals := job.Originals()
	if originals == nil {
		// Never restored (it stops by deletion): nothing to remember.
		return job.Run(infos)
	}
	encoded, err := EncodeOriginals(originals)
	if err != nil {
		return err
	}
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[OriginalPodSetsAnnotation] = encoded
	obj.SetAnnotations(annotations)
	return job.Run(infos)
}

// PodSetInfos is what to inject into an admitted Workload's pods: the
// flavors' node labels and tolerations, the admission checks'
// podSetUpdates, and the podset label. reader reads ResourceFlavors.
func PodSetInfos(ctx context.Context, reader client.Reader, wl *kueue.Workload) ([]PodSetInfo, error) {
	flavors := map[kueue.ResourceFlavorReference]*kueue.ResourceFlavor{}
	for _, psa := range wl.Status.Admission.PodSetAssignments {
		for _, ref := range psa.Flavors {
			if _, ok := flavors[ref]; ok {
				continue
			}
			rf := &kueue.ResourceFlavor{}
			if err := reader.Get(ctx, client.ObjectKey{Name: string(ref)}, rf); err != nil {
				if apierrors.IsNotFound(err) {
					continue // FromAdmission names the missing flavor
				}
				return nil, fmt.Errorf("reading ResourceFlavor %s: %w", ref, err)
			}
			flavors[ref] = rf
		}
	}
	var updates []kueue.PodSetUpdate
	for _, check := range wl.Status.AdmissionChecks {
		updates = append(updates, check.PodSetUpdates...)
	}
	infos, err := FromAdmission(wl.Status.Admission, flavors, updates)
	if err != nil {
		return nil, err
	}
	for i := range infos {
		infos[i].Labels = mergeInto(infos[i].Labels, map[string]string{kueue.PodSetLabel: string(infos[i].Name)})
	}
	return infos, nil
}

// evict stops an evicted job, then gives its quota back once no pod of it
// can run: the job reports none active, the API server lists none that
// has not ended, and stopSettle has passed since the eviction. The job's
// own status comes from the cache and may predate a pod its controller
// created just before the suspension (a job admitted and preempted at
// once); the settle time lets that controller see the suspension first.
//
// The Workload of a suspended job then takes the job's shape in the same
// pass: a scheduler that reserved the old shape again in between would
// otherwise win the race and hold quota the job no longer matches.
func (r *Reconciler) evict(ctx context.Context, job Job, wl *kueue.Workload, queue string) (ctrl.Result, error) {
	evicted := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted)
	stopped, err := r.stopJob(ctx, job, fmt.Sprintf("%s: %s", evicted.Reason, evicted.Message))
	if !stopped || err != nil {
		return ctrl.Result{}, err
	}
	if wait := stopSettle - r.Clock.Since(evicted.LastTransitionTime.Time); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	if gone, err := r.podsGone(ctx, wl.Namespace, job.Object().GetName(), job.Object().GetUID()); err != nil || !gone {
		return ctrl.Result{RequeueAfter: podsGoneRecheck}, err
	}
	letGo := patch.Always(func() { workload.ClearReservation(wl, workload.QueuesAgain(wl), r.Clock.Now()) })
	if _, err := r.Workloads.Status(ctx, wl, "clear-reservation", letGo); err != nil {
		return ctrl.Result{}, fmt.Errorf("clearing the reservation of Workload %s: %w", wl.Name, err)
	}
	if workload.IsFinished(wl) || !job.IsSuspended() || hasOriginals(job.Object()) {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, r.syncPendingWorkload(ctx, job, wl, queue)
}

// evictChanged marks the Workload of a job that no longer matches its
// admission Evicted; the eviction path stops the job and clears the
// reservation.
func (r *Reconciler) evictChanged(ctx context.Context, job Job, wl *kueue.Workload, why string) error {
	message := fmt.Sprintf("The job no longer matches its admission: %s; it is stopped and queued again with its new shape", why)
	evict := patch.Always(func() { workload.MarkEvicted(wl, EvictedReasonJobChanged, message, r.Clock.Now()) })
	if _, err := r.Workloads.Status(ctx, wl, "evict-changed", evict); err != nil {
		return fmt.Errorf("evicting Workload %s of a changed job: %w", wl.Name, err)
	}
	r.Recorder.Eventf(job.Object(), wl, corev1.EventTypeWarning, EventStopped, "Evict", message)
	return nil
}

// stopJob suspends a running job, waits until its pods are gone, and
// restores what admission injected. It reports whether the job is fully
// stopped; a job's status change brings the reconciler back meanwhile.
func (r *Reconciler) stopJob(ctx context.Context, job Job, why string) (bool, error) {
	obj := job.Object()
	if g, ok := job.(Group); ok {
		return r.stopMembers(ctx, g, why)
	}
	if _, deletes := job.(StopsByDeletion); deletes && !job.IsSuspended() {
		if err := r.Client.Delete(ctx, obj, client.Preconditions{UID: ptr.To(obj.GetUID())}); client.IgnoreNotFound(err) != nil {
			return false, fmt.Errorf("deleting %s to stop it: %w", client.ObjectKeyFromObject(obj), err)
		}
		r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, EventStopped, "Delete", "sluice deleted it: %s", why)
		return false, nil
	}
	if !job.IsSuspended() {
		job.Suspend()
		if err := r.Client.Update(ctx, obj); err != nil {
			return false, fmt.Errorf("suspending %s: %w", client.ObjectKeyFromObject(obj), err)
		}
		reason := EventSuspended
		if hasOriginals(obj) {
			reason = EventStopped
		}
		r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, reason, "Suspend", "sluice suspended the job: %s", why)
		return false, nil
	}
	if job.Active() {
		return false, nil
	}
	originals, err := OriginalsOf(obj)
	if err != nil || originals == nil {
		// Nothing to restore (or unreadable: the template stays as it is).
		return true, nil
	}
	job.Restore(originals)
	annotations := obj.GetAnnotations()
	delete(annotations, OriginalPodSetsAnnotation)
	obj.SetAnnotations(annotations)
	if err := r.Client.Update(ctx, obj); err != nil {
		return false, fmt.Errorf("restoring the pod templates of %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	return true, nil
}

func (r *Reconciler) decide(ctx context.Context, obj client.Object) (Placement, error) {
	if r.Kind.Decide != nil {
		return r.Kind.Decide(obj), nil
	}
	return r.Policy.Decide(ctx, r.Client, obj)
}

// finalize finishes the Workloads of an object being deleted (a Pod that
// was evicted, or deleted by its owner) and lets the object go.
func (r *Reconciler) finalize(ctx context.Context, job Job) error {
	if t, ok := job.(Terminating); ok && t.StillRunning() {
		// Its quota is still in use until it stops: its status change
		// (a terminal phase) brings the reconciler back.
		return nil
	}
	obj := job.Object()
	owned, err := r.ownedWorkloads(ctx, obj)
	if err != nil {
		return err
	}
	for i := range owned {
		wl := &owned[i]
		reason, message := FinishedReasonDeleted, "The object was deleted"
		if done, succeeded, msg := job.Finished(); done {
			reason, message = FinishedReasonSucceeded, msg
			if !succeeded {
				reason = FinishedReasonFailed
			}
		}
		if evicted := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted); evicted != nil && evicted.Status == metav1.ConditionTrue {
			reason, message = FinishedReasonEvicted, evicted.Message
		}
		if err := r.finish(ctx, job, wl, reason, message); err != nil {
			return err
		}
	}
	return r.release(ctx, job)
}

// release removes the kind's finalizer from the job's objects (every
// member of a group): the Workload no longer needs them.
func (r *Reconciler) release(ctx context.Context, job Job) error {
	objects := []client.Object{job.Object()}
	if g, ok := job.(Group); ok {
		objects = g.Members()
	}
	for _, obj := range objects {
		if err := r.releaseObject(ctx, obj); err != nil {
			return err
		}
	}
	return nil
}

func (r *Reconciler) releaseObject(ctx context.Context, obj client.Object) error {
	if r.Kind.Finalizer == "" || !controllerutil.RemoveFinalizer(obj, r.Kind.Finalizer) {
		return nil
	}
	if err := r.Client.Update(ctx, obj); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("removing finalizer %s from %s: %w", r.Kind.Finalizer, client.ObjectKeyFromObject(obj), err)
	}
	return nil
}

// finish marks the Workload Finished as the job ended; its quota is free.
func (r *Reconciler) finish(ctx context.Context, job Job, wl *kueue.Workload, reason, message string) error {
	if workload.IsFinished(wl) {
		return nil
	}
	finished := metav1.Condition{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: reason, Message: message,
		LastTransitionTime: metav1.NewTime(r.Clock.Now()), ObservedGeneration: wl.Generation}
	if _, err := r.Workloads.Status(ctx, wl, "finish", func() bool { return meta.SetStatusCondition(&wl.Status.Conditions, finished) }); err != nil {
		return fmt.Errorf("finishing Workload %s: %w", wl.Name, err)
	}
	r.Recorder.Eventf(job.Object(), wl, corev1.EventTypeNormal, EventFinished, "Finish", "Workload %s finished (%s): %s", wl.Name, reason, message)
	return nil
}

// syncReclaimable reports the pods that are done for good while the job
// runs (or that a lowered count took away), so their share of quota frees
// up. The count only grows.
func (r *Reconciler) syncReclaimable(ctx context.Context, job Job, wl *kueue.Workload) error {
	want := append(job.ReclaimablePods(), shrunk(job, wl)...)
	changed := false
	merged := slices.Clone(wl.Status.ReclaimablePods)
	for _, rp := range want {
		i := slices.IndexFunc(merged, func(have kueue.ReclaimablePod) bool { return have.Name == rp.Name })
		switch {
		case i < 0 && rp.Count > 0:
			merged = append(merged, rp)
			changed = true
		case i >= 0 && rp.Count > merged[i].Count:
			merged[i].Count = rp.Count
			changed = true
		}
	}
	if !changed {
		return nil
	}
	if _, err := r.Workloads.Status(ctx, wl, "reclaimable-pods", patch.Always(func() { wl.Status.ReclaimablePods = merged })); err != nil {
		return fmt.Errorf("updating reclaimablePods of Workload %s: %w", wl.Name, err)
	}
	return nil
}

// ownedWorkloads are the Workloads the job controls.
func (r *Reconciler) ownedWorkloads(ctx context.Context, obj client.Object) ([]kueue.Workload, error) {
	return controlledWorkloads(ctx, r.Client, r.Kind, obj, true)
}

// controlledWorkloads are the Workloads obj is the controller of.
// indexed: reader is the manager's cache, which indexes Workloads by owner
// (the API server lists the namespace).
func controlledWorkloads(ctx context.Context, reader client.Reader, kind Kind, obj client.Object, indexed bool) ([]kueue.Workload, error) {
	opts := []client.ListOption{client.InNamespace(obj.GetNamespace())}
	if indexed {
		opts = append(opts, client.MatchingFields{IndexWorkloadOwner: ownerKey(kind, obj.GetName())})
	}
	list := &kueue.WorkloadList{}
	if err := reader.List(ctx, list, opts...); err != nil {
		return nil, fmt.Errorf("listing the Workloads of %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	var owned []kueue.Workload
	for _, wl := range list.Items {
		if owner := metav1.GetControllerOf(&wl); owner != nil && owner.UID == obj.GetUID() {
			owned = append(owned, wl)
		}
	}
	return owned, nil
}

// podsGoneRecheck is how often a deleted job's pods are looked for while
// its Workload waits for them to be gone (pods are not watched).
const podsGoneRecheck = 2 * time.Second

// stopSettle is how long after an eviction a stopped job's quota is kept:
// long enough for its controller to have acted on the suspension.
const stopSettle = time.Second

// deleteWorkloads deletes the Workloads controlled by a job of this name
// other than the one with keepUID (the job is gone or being deleted, or it
// is an earlier job of the same name): the garbage collector would too,
// but not where it doesn't run. A deleted Workload that holds a
// reservation keeps it (through its finalizer) until the job's pods are
// gone; the reconciler comes back to look until then.
func (r *Reconciler) deleteWorkloads(ctx context.Context, job types.NamespacedName, keepUID types.UID) (ctrl.Result, error) {
	list := &kueue.WorkloadList{}
	if err := r.Client.List(ctx, list, client.InNamespace(job.Namespace),
		client.MatchingFields{IndexWorkloadOwner: ownerKey(r.Kind, job.Name)}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the Workloads of %s: %w", job, err)
	}
	var res ctrl.Result
	for i := range list.Items {
		wl := &list.Items[i]
		owner := metav1.GetControllerOf(wl)
		if owner == nil || owner.UID == keepUID {
			continue
		}
		if r.Kind.Finalizer != "" && workload.IsFinished(wl) {
			// Finished with its object (a Pod's Workload says how it ended);
			// it holds no quota, and the garbage collector takes it.
			continue
		}
		if wl.DeletionTimestamp.IsZero() {
			if err := r.Client.Delete(ctx, wl, client.Preconditions{UID: &wl.UID}); client.IgnoreNotFound(err) != nil {
				return ctrl.Result{}, fmt.Errorf("deleting orphaned Workload %s: %w", wl.Name, err)
			}
		}
		if !holdsQuota(wl) {
			continue // the Workload reconciler lets it go
		}
		gone, err := r.podsGone(ctx, wl.Namespace, owner.Name, owner.UID)
		if err != nil {
			return ctrl.Result{}, err
		}
		if !gone {
			res.RequeueAfter = podsGoneRecheck
			continue
		}
		if err := ReleaseWorkload(ctx, r.Client, wl); err != nil {
			return ctrl.Result{}, err
		}
	}
	return res, nil
}

// holdsQuota tells whether a Workload's finalizer keeps its reservation
// counted: it has one, and has not finished.
func holdsQuota(wl *kueue.Workload) bool {
	return controllerutil.ContainsFinalizer(wl, kueue.ResourceInUseFinalizerName) &&
		workload.HasQuotaReservation(wl) && !workload.IsFinished(wl)
}

func (r *Reconciler) podsGone(ctx context.Context, namespace, name string, jobUID types.UID) (bool, error) {
	if r.Kind.PodsGone == nil {
		return true, nil
	}
	return r.Kind.PodsGone(ctx, r.APIReader, namespace, name, jobUID)
}

// ReleaseWorkload removes the resource-in-use finalizer: nothing of the
// Workload's job runs any more, its quota may go.
func ReleaseWorkload(ctx context.Context, c client.Client, wl *kueue.Workload) error {
	if !controllerutil.RemoveFinalizer(wl, kueue.ResourceInUseFinalizerName) {
		return nil
	}
	if err := c.Update(ctx, wl); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("releasing Workload %s: %w", wl.Name, err)
	}
	return nil
}

// releaseDeleted stops the job of a Workload being deleted, then lets the
// Workload go.
func (r *Reconciler) releaseDeleted(ctx context.Context, job Job, wl *kueue.Workload) error {
	if holdsQuota(wl) {
		stopped, err := r.stopJob(ctx, job, fmt.Sprintf("its Workload %s is being deleted", wl.Name))
		if !stopped || err != nil {
			return err
		}
	}
	return ReleaseWorkload(ctx, r.Client, wl)
}

// jobsNaming maps a Workload without a controller to the jobs that name it
// as their prebuilt Workload.
func (r *Reconciler) jobsNaming(ctx context.Context, o client.Object) []reconcile.Request {
	if metav1.GetControllerOf(o) != nil {
		return nil
	}
	list := r.Kind.NewList()
	if err := r.Client.List(ctx, list, client.InNamespace(o.GetNamespace()), client.MatchingFields{IndexPrebuiltWorkload: o.GetName()}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the jobs that name a prebuilt Workload", "workload", o.GetName())
		return nil
	}
	var reqs []reconcile.Request
	_ = meta.EachListItem(list, func(item runtime.Object) error {
		if obj, ok := item.(client.Object); ok {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
		}
		return nil
	})
	return reqs
}

func hasOriginals(obj client.Object) bool {
	_, ok := obj.GetAnnotations()[OriginalPodSetsAnnotation]
	return ok
}

// OriginalsOf reads what admission changed in a started job, to undo it
// (nil when the job was not started by sluice).
func OriginalsOf(obj client.Object) ([]PodSetInfo, error) {
	value, ok := obj.GetAnnotations()[OriginalPodSetsAnnotation]
	if !ok {
		return nil, nil
	}
	return DecodeOriginals(value)
}

// describeAssignments renders "podSet main: 3 pods, cpu=on-demand, memory=on-demand".
func describeAssignments(adm *kueue.Admission) string {
	parts := make([]string, 0, len(adm.PodSetAssignments))
	for _, psa := range adm.PodSetAssignments {
		var flavors []string
		for _, name := range slices.Sorted(maps.Keys(psa.Flavors)) {
			flavors = append(flavors, fmt.Sprintf("%s=%s", name, psa.Flavors[name]))
		}
		count := ""
		if psa.Count != nil {
			count = fmt.Sprintf("%d pods, ", *psa.Count)
		}
		parts = append(parts, fmt.Sprintf("podSet %s: %sflavors %s", psa.Name, count, strings.Join(flavors, ", ")))
	}
	return strings.Join(parts, "; ")
}

// SetupWithManager watches the kind's objects, the Workloads they own, the
// Workloads jobs name as prebuilt before owning them, and the objects they
// run as (RunsAs).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Workloads == nil {
		return fmt.Errorf("the %s reconciler has no Workload status writer", r.Kind.GVK.Kind)
	}
	if r.Kind.Group != nil {
		return r.setupGroupWithManager(mgr)
	}
	b := ctrl.NewControllerManagedBy(mgr).
		For(r.Kind.NewObject()).
		Owns(&kueue.Workload{}).
		Watches(&kueue.Workload{}, handler.EnqueueRequestsFromMapFunc(r.jobsNaming))
	if r.Kind.RunsAs != nil {
		// What the job runs as says its pod sets.
		b = b.Owns(r.Kind.RunsAs.NewObject())
	}
	return b.Named(strings.ReplaceAll(r.Kind.Framework, "/", "-")).Complete(r)
}
