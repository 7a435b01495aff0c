package pod

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
)

// The guards below keep a tenant from getting a Pod past its admission by
// editing it (dropping sluice's label or gate), by naming someone else's
// Workload as its group, or by claiming an owner it doesn't have.

// validateStaysQueued refuses an update that takes a managed Pod out of its
// queue: the managed label may never go (the reconciler and the manager's
// cache follow it), and the admission gate goes only when sluice takes it
// off, once the Pod's Workload admits that Pod. Anyone else taking it off,
// even after the Workload was admitted, could start a Pod its admission has
// no place for (one more member of an admitted group).
func (w *Webhook) validateStaysQueued(ctx context.Context, oldPod, newPod *corev1.Pod) field.ErrorList {
	if oldPod.Labels[kueue.ManagedLabel] != "true" {
		return nil
	}
	if newPod.Labels[kueue.ManagedLabel] != "true" {
		return field.ErrorList{field.Forbidden(field.NewPath("metadata", "labels").Key(kueue.ManagedLabel),
			"can't be removed or changed: sluice queues this Pod, and removing the label would let it run outside its queue")}
	}
	if !gated(oldPod) || gated(newPod) {
		return nil
	}
	if req, err := admission.RequestFromContext(ctx); err == nil && req.UserInfo.Username == w.Self {
		return nil
	}
	return field.ErrorList{field.Forbidden(field.NewPath("spec", "schedulingGates"),
		fmt.Sprintf("the scheduling gate %s is sluice's: sluice takes it off when the Pod's Workload admits the Pod", kueue.AdmissionSchedulingGate))}
}

// isGroupWorkloadOf tells whether a Workload is the one sluice made for the
// pod group: named after it and labelled with it.
func isGroupWorkloadOf(wl *kueue.Workload, group string) bool {
	return wl.Name == group && wl.Labels[kueue.PodGroupNameLabel] == group
}

// validateGroupName refuses a new Pod whose group name is taken by a
// Workload that is not that group's (a Job's, a bare one, another tenant's),
// or whose group waits in another LocalQueue.
func (w *Webhook) validateGroupName(ctx context.Context, p *corev1.Pod) (field.ErrorList, error) {
	group := p.Labels[kueue.PodGroupNameLabel]
	if group == "" {
		return nil, nil
	}
	wl := &kueue.Workload{}
	if err := w.OwnerReader.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: group}, wl); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	path := field.NewPath("metadata", "labels").Key(kueue.PodGroupNameLabel)
	if !isGroupWorkloadOf(wl, group) {
		return field.ErrorList{field.Invalid(path, group,
			"a Workload of this name exists and is not this pod group's; choose another group name")}, nil
	}
	if queue := p.Labels[kueue.QueueNameLabel]; string(wl.Spec.QueueName) != queue {
		return field.ErrorList{field.Invalid(field.NewPath("metadata", "labels").Key(kueue.QueueNameLabel), queue,
			fmt.Sprintf("the Pods of group %s wait in LocalQueue %q: a group has one queue", group, wl.Spec.QueueName))}, nil
	}
	return nil, nil
}

// ownedByQueuedParent tells whether a Pod's controller owner is an enabled
// kind whose Workload counts it, checked against the API: the owner exists
// with the UID the reference names, and makes the Pod (Kind.Makes: a Job
// selects it, an MPIJob named it for one of its workers). A forged
// reference (to nothing, to another object of that name, or to an owner
// that didn't make the Pod) doesn't exempt a Pod from queueing.
//
// A Pod whose owner is a kind sluice knows but does not drive (the
// RayCluster of a RayJob, with only RayJobs enabled) is its nearest
// enabled ancestor's: that one's Workload counts it.
func (w *Webhook) ownedByQueuedParent(ctx context.Context, p *corev1.Pod) (bool, error) {
	ownerKind, ok := integration.ControllerKind(p)
	if !ok {
		return false, nil
	}
	if !w.Policy.MayOwn(ownerKind, podKind) {
		// An enabled kind that does not make Pods counts none; a kind the
		// walk follows but sluice does not queue (a ReplicaSet, a
		// disabled kind) passes the question up.
		if _, walkable := w.walkable()[ownerKind]; !walkable || w.Policy.ParentKinds[ownerKind] {
			return false, nil
		}
		return w.enabledAncestor(ctx, p)
	}
	// The cache first (a Job's Pods are created right after it, and the
	// cache usually has it); the API server when the cache doesn't. An
	// external framework's kind is read as metadata from the API server
	// only: the manager does not watch it.
	walkable := w.walkable()
	readers := []client.Reader{w.Reader, w.OwnerReader}
	if ref := metav1.GetControllerOf(p); ref != nil {
		if newObj, ok := walkable[schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).GroupKind()]; ok {
			if _, metadataOnly := newObj().(*metav1.PartialObjectMetadata); metadataOnly {
				readers = readers[1:]
			}
		}
	}
	owner, err := controllerOwner(ctx, walkable, p, readers...)
	if owner == nil || err != nil {
		return false, err
	}
	return w.Policy.Counts(owner.obj, p), nil
}

// enabledAncestor tells whether an ancestor of the Pod above its owner is
// of an enabled kind. A Pod ancestor ends the search: a queued Pod's
// Workload counts only that Pod (a LeaderWorkerSet's leader owns its
// workers' StatefulSet).
func (w *Webhook) enabledAncestor(ctx context.Context, p *corev1.Pod) (bool, error) {
	chain, err := ancestors(ctx, w.OwnerReader, w.walkable(), p)
	if err != nil || len(chain) == 0 || !w.Policy.Made(chain[0].obj, chain[0].kind, p, podKind) {
		return false, err
	}
	for i := 1; i < len(chain); i++ {
		a := chain[i]
		if a.kind == podKind {
			return false, nil
		}
		if w.Policy.ParentKinds[a.kind] {
			// An enabled kind counts what it makes, nothing else.
			return w.Policy.MayOwn(a.kind, chain[i-1].kind) && w.Policy.Counts(a.obj, chain[i-1].obj), nil
		}
		if !w.Policy.Made(a.obj, a.kind, chain[i-1].obj, chain[i-1].kind) {
			return false, nil
		}
	}
	return false, nil
}
