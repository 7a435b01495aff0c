package pod

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
	"github.com/sluicehq/sluice/internal/workload"
)

// GroupReconciler owns the Workload of each pod group
// (kueue.x-k8s.io/pod-group-name + pod-group-total-count): one Workload
// named after the group, a podSet per distinct pod shape, admitted only
// once every Pod of the group exists, and all Pods ungated together.
type GroupReconciler struct {
	// Client reads Pods, Workloads and StatefulSets from the manager's cache.
	Client client.Client
	Clock  clock.Clock
	// LabelKeysToCopy are the labels of the group's first Pod its
	// Workload gets (integrations.labelKeysToCopy).
	LabelKeysToCopy []string
}

// groupMember tells whether a Pod belongs to a group sluice queues.
func groupMember(o client.Object) bool {
	return o.GetLabels()[kueue.ManagedLabel] == "true" && o.GetLabels()[kueue.PodGroupNameLabel] != ""
}

// IsGroupWorkload tells whether a Workload is a pod group's: its Pods must
// stop before its reservation is cleared.
func IsGroupWorkload(wl *kueue.Workload) bool { return wl.Labels[kueue.PodGroupNameLabel] != "" }

func (r *GroupReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return integration.IgnoreConflict(r.reconcile(ctx, req))
}

func (r *GroupReconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	list := &corev1.PodList{}
	if err := r.Client.List(ctx, list, client.InNamespace(req.Namespace), client.MatchingLabels{kueue.PodGroupNameLabel: req.Name}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the Pods of group %s: %w", req, err)
	}
	pods := slices.DeleteFunc(list.Items, func(p corev1.Pod) bool { return !groupMember(&p) })
	wl := &kueue.Workload{}
	err := r.Client.Get(ctx, req.NamespacedName, wl)
	if apierrors.IsNotFound(err) {
		wl = nil
	} else if err != nil {
		return ctrl.Result{}, err
	}
	if wl == nil {
		return ctrl.Result{}, r.create(ctx, req, pods)
	}
	if !isGroupWorkloadOf(wl, req.Name) {
		// A Workload of the group's name that sluice didn't make for it (a
		// Job's, a bare one): never evict, resize, finish or delete it.
		// The webhook refuses such Pods; ones from before wait gated.
		ctrl.LoggerFrom(ctx).Info("pod group name taken by a Workload that is not the group's; its Pods stay gated", "workload", wl.Name)
		return ctrl.Result{}, nil
	}
	if len(pods) == 0 {
		// The group is gone, and with it what the Workload held.
		if err := r.Client.Delete(ctx, wl); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, integration.ReleaseWorkload(ctx, r.Client, wl)
	}
	if !wl.DeletionTimestamp.IsZero() {
		// Someone deleted the group's Workload: its running Pods stop
		// before it (and its quota) goes; the gated ones get a new one.
		return ctrl.Result{}, r.releaseDeleted(ctx, wl, pods)
	}
	if resized, err := r.resize(ctx, wl, pods); resized || err != nil {
		return ctrl.Result{}, err
	}
	switch {
	case workload.IsFinished(wl):
		return ctrl.Result{}, r.releaseAll(ctx, pods, func(*corev1.Pod) bool { return true })
	case workload.IsEvicting(wl):
		return ctrl.Result{}, r.evict(ctx, wl, pods)
	case workload.HasQuotaReservation(wl) && workload.IsAdmitted(wl):
		if err := r.ungate(ctx, wl, pods); errors.Is(err, integration.ErrConflictingUpdates) {
			// No retry makes them agree: the Workload ends, saying why.
			return ctrl.Result{}, r.finish(ctx, wl, integration.FinishedReasonFailedToStart, err.Error())
		} else if err != nil {
			return ctrl.Result{}, err
		}
		if err := r.syncEnd(ctx, wl, pods); err != nil || workload.IsFinished(wl) {
			return ctrl.Result{}, err
		}
		var ready int32
		for i := range pods {
			if pods[i].DeletionTimestamp.IsZero() {
				ready += readyPods(&pods[i])
			}
		}
		return ctrl.Result{}, integration.SyncPodsReady(ctx, r.Client, wl, ready, r.Clock.Now())
	}
	return ctrl.Result{}, nil
}

// create builds the group's Workload once every Pod exists (or at once
// with pod-group-fast-admission).
func (r *GroupReconciler) create(ctx context.Context, req ctrl.Request, pods []corev1.Pod) error {
	live := slices.DeleteFunc(slices.Clone(pods), func(p corev1.Pod) bool { return !p.DeletionTimestamp.IsZero() })
	if len(live) == 0 {
		return nil
	}
	first := &live[0]
	total, err := r.desiredTotal(ctx, first)
	if err != nil || total < 1 {
		return err // a count below 1 is refused by the webhook; nothing to build
	}
	if len(live) < total && first.Annotations[kueue.PodGroupFastAdmissionAnno] != "true" {
		return nil
	}
	wl := &kueue.Workload{
		ObjectMeta: metav1.ObjectMeta{Namespace: req.Namespace, Name: req.Name,
			Labels: map[string]string{kueue.PodGroupNameLabel: req.Name},
			// Deleting it must not free the quota while its Pods run.
			Finalizers: []string{kueue.ResourceInUseFinalizerName}},
		Spec: kueue.WorkloadSpec{QueueName: kueue.LocalQueueName(first.Labels[kueue.QueueNameLabel]), PodSets: groupPodSets(live, total)},
	}
	if first.Annotations[kueue.StandaloneAnnotation] == "true" {
		wl.Labels[kueue.StandaloneAnnotation] = "true"
	}
	integration.CopyLabels(wl.Labels, first.Labels, r.LabelKeysToCopy)
	// No owner references: the Pods of a group come and go (replacements,
	// scaling, rolling updates), and the garbage collector would delete the
	// Workload of an admitted group the moment its first Pods were gone.
	// The Workload goes when the group has no Pods left.
	if err := r.Client.Create(ctx, wl); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the Workload of pod group %s: %w", req, err)
	}
	return nil
}

// desiredTotal is how many Pods the group should have: its StatefulSet's
// replicas when the statefulset integration queued it (scaling doesn't
// touch the pod template), else the total-count annotation (a
// LeaderWorkerSet's groups are StatefulSets' Pods too, sized by the
// group's size).
func (r *GroupReconciler) desiredTotal(ctx context.Context, p *corev1.Pod) (int, error) {
	owner := metav1.GetControllerOf(p)
	if owner != nil && owner.Kind == "StatefulSet" && owner.APIVersion == "apps/v1" && p.Annotations[kueue.PodSuspendingParentAnno] == configapi.FrameworkStatefulSet {
		sts := &appsv1.StatefulSet{}
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: owner.Name}, sts)
		if err == nil && sts.UID == owner.UID {
			return int(ptr.Deref(sts.Spec.Replicas, 1)), nil
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return 0, fmt.Errorf("reading StatefulSet %s: %w", owner.Name, err)
		}
	}
	total, err := strconv.Atoi(p.Annotations[kueue.PodGroupTotalCountAnno])
	if err != nil {
		return 0, nil
	}
	return total, nil
}

// ReasonResized evicts a pod group scaled beyond its admission: it is
// admitted again at its new size.
const ReasonResized = "Resized"

// resize brings a group's Workload to the group's size. A pending Workload
// is rebuilt; an admitted group that shrank reports the Pods it no longer
// needs as reclaimable (their quota frees up, nothing restarts); one that
// grew is evicted, to be admitted again whole.
func (r *GroupReconciler) resize(ctx context.Context, wl *kueue.Workload, pods []corev1.Pod) (bool, error) {
	if workload.IsFinished(wl) || workload.IsEvicting(wl) || len(pods) == 0 {
		return false, nil
	}
	desired, err := r.desiredTotal(ctx, &pods[0])
	if err != nil || desired < 1 {
		return false, err
	}
	admitted := int32(0)
	for _, ps := range wl.Spec.PodSets {
		admitted += ps.Count
	}
	reclaimable := int32(0)
	for _, rp := range wl.Status.ReclaimablePods {
		reclaimable += rp.Count
	}
	switch {
	case int32(desired) == admitted-reclaimable:
		return false, nil
	case !workload.HasQuotaReservation(wl):
		if int32(desired) == admitted {
			return false, nil
		}
		return true, client.IgnoreNotFound(r.Client.Delete(ctx, wl, client.Preconditions{UID: &wl.UID}))
	case int32(desired) < admitted-reclaimable:
		patch := client.MergeFromWithOptions(wl.DeepCopy(), client.MergeFromWithOptimisticLock{})
		wl.Status.ReclaimablePods = shrink(wl.Spec.PodSets, wl.Status.ReclaimablePods, admitted-reclaimable-int32(desired))
		return true, r.Client.Status().Patch(ctx, wl, patch)
	default:
		patch := client.MergeFromWithOptions(wl.DeepCopy(), client.MergeFromWithOptimisticLock{})
		workload.MarkEvicted(wl, ReasonResized, fmt.Sprintf("the group grew to %d Pods, beyond the %d admitted: it is admitted again at its new size", desired, admitted-reclaimable), r.Clock.Now())
		return true, r.Client.Status().Patch(ctx, wl, patch)
	}
}

// shrink adds n reclaimable Pods, from the last podSet backwards, within
// each podSet's count.
func shrink(podSets []kueue.PodSet, current []kueue.ReclaimablePod, n int32) []kueue.ReclaimablePod {
	out := slices.Clone(current)
	for i := len(podSets) - 1; i >= 0 && n > 0; i-- {
		j := slices.IndexFunc(out, func(rp kueue.ReclaimablePod) bool { return rp.Name == podSets[i].Name })
		if j < 0 {
			out = append(out, kueue.ReclaimablePod{Name: podSets[i].Name})
			j = len(out) - 1
		}
		take := min(n, podSets[i].Count-out[j].Count)
		out[j].Count += take
		n -= take
	}
	return slices.DeleteFunc(out, func(rp kueue.ReclaimablePod) bool { return rp.Count == 0 })
}

// groupPodSets: one podSet per distinct shape, named by the shape; Pods not
// created yet (fast admission) count in the first shape.
func groupPodSets(pods []corev1.Pod, total int) []kueue.PodSet {
	byShape := map[string]*kueue.PodSet{}
	for i := range pods {
		name := shapeOf(&pods[i])
		if ps, ok := byShape[name]; ok {
			ps.Count++
			continue
		}
		podSets, _ := (&Pod{&pods[i]}).PodSets()
		ps := podSets[0]
		ps.Name = kueue.PodSetReference(name)
		byShape[name] = &ps
	}
	names := slices.Sorted(maps.Keys(byShape))
	out := make([]kueue.PodSet, 0, len(names))
	for _, n := range names {
		out = append(out, *byShape[n])
	}
	if missing := int32(total - len(pods)); missing > 0 && len(out) > 0 {
		out[0].Count += missing
	}
	return out
}

// runningPodSet is the podSet a started Pod holds a place in: the one it
// was started as (its podset label), since starting it injected the
// flavor's node selector and changed its shape.
func runningPodSet(p *corev1.Pod, admitted map[kueue.PodSetReference]integration.PodSetInfo) kueue.PodSetReference {
	if name := kueue.PodSetReference(p.Labels[kueue.PodSetLabel]); name != "" {
		if _, ok := admitted[name]; ok {
			return name
		}
	}
	return kueue.PodSetReference(shapeOf(p))
}

// shapeOf names a Pod's role in its group: a hash of what admission looks
// at (requests, node selector, tolerations, affinity).
func shapeOf(p *corev1.Pod) string {
	h := sha256.New()
	requests := workload.PodRequests(&p.Spec)
	for _, name := range slices.Sorted(maps.Keys(requests)) {
		fmt.Fprintf(h, "%s=%d;", name, requests[name])
	}
	for _, k := range slices.Sorted(maps.Keys(p.Spec.NodeSelector)) {
		fmt.Fprintf(h, "ns:%s=%s;", k, p.Spec.NodeSelector[k])
	}
	// JSON, not %v: tolerations and affinity hold pointers.
	constraints, _ := json.Marshal(struct {
		Tolerations []corev1.Toleration `json:"t"`
		Affinity    *corev1.Affinity    `json:"a"`
	}{p.Spec.Tolerations, p.Spec.Affinity})
	h.Write(constraints)
	return hex.EncodeToString(h.Sum(nil))[:8]
}

// ungate starts the group's gated Pods, each with its podSet's flavor.
func (r *GroupReconciler) ungate(ctx context.Context, wl *kueue.Workload, pods []corev1.Pod) error {
	infos, err := integration.PodSetInfos(ctx, r.Client, wl)
	if err != nil {
		return err
	}
	byName := map[kueue.PodSetReference]integration.PodSetInfo{}
	for _, info := range infos {
		byName[info.Name] = info
	}
	// Room per podSet: its admitted count less its Pods that run (a
	// replacement Pod starts only in the place of one that ended), and
	// room in all: a Pod that joins an admitted group (a tenant's Pod
	// dressed as a member) waits unless one ended.
	room := map[kueue.PodSetReference]int32{}
	var total int32
	for _, info := range infos {
		room[info.Name] = info.Count
		total += info.Count
	}
	for i := range pods {
		if p := &pods[i]; !gated(p) && p.DeletionTimestamp.IsZero() && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			room[runningPodSet(p, byName)]--
			total--
		}
	}
	for i := range pods {
		p := &Pod{&pods[i]}
		if !p.IsSuspended() || !p.DeletionTimestamp.IsZero() {
			continue
		}
		name := kueue.PodSetReference(shapeOf(p.Pod))
		info, ok := byName[name]
		if !ok || room[name] <= 0 || total <= 0 {
			continue // no place for it in the admission: it waits
		}
		room[name]--
		total--
		if err := p.Run([]integration.PodSetInfo{info}); err != nil {
			return fmt.Errorf("starting Pod %s of group %s: %w", p.Name, wl.Name, err)
		}
		if err := r.Client.Update(ctx, p.Pod); err != nil {
			return fmt.Errorf("starting Pod %s of group %s: %w", p.Name, wl.Name, err)
		}
	}
	return nil
}

// syncEnd finishes the Workload when the group is done: every Pod
// succeeded (not for serving groups), or a Pod that may not be retried
// failed. Failed Pods that may be retried let go, for their replacements.
func (r *GroupReconciler) syncEnd(ctx context.Context, wl *kueue.Workload, pods []corev1.Pod) error {
	total := int(wl.Spec.PodSets[0].Count)
	for _, ps := range wl.Spec.PodSets[1:] {
		total += int(ps.Count)
	}
	succeeded, failedForGood := 0, false
	for i := range pods {
		switch pods[i].Status.Phase {
		case corev1.PodSucceeded:
			succeeded++
		case corev1.PodFailed:
			failedForGood = failedForGood || pods[i].Annotations[kueue.RetriableInGroupAnno] == "false"
		}
	}
	serving := len(pods) > 0 && pods[0].Annotations[kueue.PodGroupServingAnno] == "true"
	reason, message := "", ""
	switch {
	case failedForGood:
		reason, message = integration.FinishedReasonFailed, "a Pod of the group failed and may not be retried (retriable-in-group: false)"
	case !serving && succeeded >= total:
		reason, message = integration.FinishedReasonSucceeded, fmt.Sprintf("all %d Pods of the group succeeded", total)
	}
	if reason == "" {
		return r.releaseAll(ctx, pods, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	}
	return r.finish(ctx, wl, reason, message)
}

// finish marks the group's Workload Finished.
func (r *GroupReconciler) finish(ctx context.Context, wl *kueue.Workload, reason, message string) error {
	patch := client.MergeFromWithOptions(wl.DeepCopy(), client.MergeFromWithOptimisticLock{})
	meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue,
		Reason: reason, Message: message, LastTransitionTime: metav1.NewTime(r.Clock.Now()), ObservedGeneration: wl.Generation})
	if err := r.Client.Status().Patch(ctx, wl, patch); err != nil {
		return fmt.Errorf("finishing the Workload of pod group %s: %w", wl.Name, err)
	}
	return nil
}

// releaseDeleted stops the running Pods of a group whose Workload is being
// deleted, and lets the Workload go once none runs.
func (r *GroupReconciler) releaseDeleted(ctx context.Context, wl *kueue.Workload, pods []corev1.Pod) error {
	running, err := r.stopPods(ctx, wl, pods)
	if err != nil || running {
		return err
	}
	return integration.ReleaseWorkload(ctx, r.Client, wl)
}

// evict deletes the group's running Pods, and gives the quota back once
// none runs.
func (r *GroupReconciler) evict(ctx context.Context, wl *kueue.Workload, pods []corev1.Pod) error {
	running, err := r.stopPods(ctx, wl, pods)
	if err != nil || running {
		return err
	}
	patch := client.MergeFromWithOptions(wl.DeepCopy(), client.MergeFromWithOptimisticLock{})
	workload.ClearReservation(wl, workload.QueuesAgain(wl), r.Clock.Now())
	if err := r.Client.Status().Patch(ctx, wl, patch); err != nil {
		return fmt.Errorf("clearing the reservation of pod group %s: %w", wl.Name, err)
	}
	return nil
}

// stopPods deletes the group's running Pods and releases the deleted
// ones; it tells whether any may still run.
func (r *GroupReconciler) stopPods(ctx context.Context, wl *kueue.Workload, pods []corev1.Pod) (bool, error) {
	running := false
	for i := range pods {
		p := &pods[i]
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if p.DeletionTimestamp.IsZero() && !gated(p) {
			if err := r.Client.Delete(ctx, p); client.IgnoreNotFound(err) != nil {
				return true, fmt.Errorf("deleting Pod %s of group %s: %w", p.Name, wl.Name, err)
			}
		}
		running = running || !gated(p)
	}
	if err := r.releaseAll(ctx, pods, func(p *corev1.Pod) bool { return !p.DeletionTimestamp.IsZero() }); err != nil {
		return true, err
	}
	return running, nil
}

// releaseAll removes the finalizer from the Pods that match.
func (r *GroupReconciler) releaseAll(ctx context.Context, pods []corev1.Pod, match func(*corev1.Pod) bool) error {
	for i := range pods {
		p := &pods[i]
		if !match(p) || !controllerutil.RemoveFinalizer(p, kueue.ManagedLabel) {
			continue
		}
		if err := r.Client.Update(ctx, p); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("releasing Pod %s: %w", p.Name, err)
		}
	}
	return nil
}

// SetupWithManager watches grouped Pods and group Workloads, both mapped to
// the group.
func (r *GroupReconciler) SetupWithManager(mgr ctrl.Manager) error {
	toGroup := func(_ context.Context, o client.Object) []reconcile.Request {
		name := o.GetLabels()[kueue.PodGroupNameLabel]
		if name == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: name}}}
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("pod-group").
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(toGroup), builder.WithPredicates(predicate.NewPredicateFuncs(groupMember))).
		Watches(&kueue.Workload{}, handler.EnqueueRequestsFromMapFunc(toGroup)).
		Complete(r)
}
