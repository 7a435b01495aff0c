package integration

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/apis/scheme"
)

// DefaultLocalQueue is the LocalQueue a namespace's unlabelled jobs go to
// when it exists.
const DefaultLocalQueue = "default"

// Policy decides which objects sluice queues, and in which LocalQueue.
type Policy struct {
	// ManageWithoutQueueName queues objects without a queue-name label in
	// the namespaces Namespaces selects.
	ManageWithoutQueueName bool
	Namespaces             labels.Selector
	// ParentKinds are the enabled kinds: an object whose controller owner is
	// one of them is left to its parent, whose Workload counts it.
	ParentKinds map[schema.GroupKind]bool
	// parentsOf are, by child kind, the enabled kinds whose Workloads count
	// its objects (their Children).
	parentsOf map[schema.GroupKind]map[schema.GroupKind]bool
	// external are the kinds of integrations.externalFrameworks: their
	// controllers are trusted with whatever they own.
	external map[schema.GroupKind]bool
	// anyChildren are the enabled kinds whose children may be of any kind
	// (ChildrenOfAnyKind): their Makes says which they count.
	anyChildren map[schema.GroupKind]bool
	// runsAsParents are, by the kind of object they run as (RunsAs), the
	// enabled kinds whose jobs run as one.
	runsAsParents map[schema.GroupKind]Kind
	// parents are the enabled kinds and the kinds they run as, by kind:
	// how to read one, and what it Makes.
	parents map[schema.GroupKind]Kind
	// known are every registered queued kind, enabled or not: what one
	// makes is known even where sluice does not queue it, for the owner
	// walks that pass through it.
	known map[schema.GroupKind]Kind
	// APIReader reads from the API server: owners, to check that an owner
	// an object names exists with the UID it names (a forged reference must
	// not exempt an object from queueing), and namespaces the cache hasn't
	// seen yet.
	APIReader client.Reader
}

// NewPolicy builds a Policy from the configuration's fields.
func NewPolicy(manageWithoutQueueName bool, namespaces *metav1.LabelSelector, kinds []Kind, apiReader client.Reader) (*Policy, error) {
	sel := labels.Everything()
	if namespaces != nil {
		var err error
		if sel, err = metav1.LabelSelectorAsSelector(namespaces); err != nil {
			return nil, fmt.Errorf("managedJobsNamespaceSelector: %w", err)
		}
	}
	p := &Policy{ManageWithoutQueueName: manageWithoutQueueName, Namespaces: sel, ParentKinds: map[schema.GroupKind]bool{}, APIReader: apiReader,
		parentsOf: map[schema.GroupKind]map[schema.GroupKind]bool{}, external: map[schema.GroupKind]bool{}, runsAsParents: map[schema.GroupKind]Kind{},
		parents: map[schema.GroupKind]Kind{}, known: map[schema.GroupKind]Kind{}, anyChildren: map[schema.GroupKind]bool{}}
	for _, k := range kinds {
		p.ParentKinds[k.GVK.GroupKind()] = true
		p.parents[k.GVK.GroupKind()] = k
		p.anyChildren[k.GVK.GroupKind()] = k.ChildrenOfAnyKind
		p.addChildren(k.GVK.GroupKind(), k.Children)
		if k.RunsAs != nil {
			p.parents[k.RunsAs.GVK.GroupKind()] = *k.RunsAs
			// The children of what a job runs as (a TrainJob's JobSet's
			// Jobs) are that object's, and so the job's, whether or not
			// the runs-as kind is enabled itself.
			p.runsAsParents[k.RunsAs.GVK.GroupKind()] = k
			p.addChildren(k.RunsAs.GVK.GroupKind(), k.RunsAs.Children)
		}
	}
	return p, nil
}

func (p *Policy) addChildren(parent schema.GroupKind, children []schema.GroupKind) {
	for _, child := range children {
		if p.parentsOf[child] == nil {
			p.parentsOf[child] = map[schema.GroupKind]bool{}
		}
		p.parentsOf[child][parent] = true
	}
}

// AddKnownKinds makes the registered queued kinds known, enabled or not
// (Made).
func (p *Policy) AddKnownKinds(kinds []Kind) {
	for _, k := range kinds {
		p.known[k.GVK.GroupKind()] = k
	}
}

// Made tells whether parent, of parentKind, made child, of childKind, as
// far as sluice can tell: for a registered kind (enabled or not), child is
// of one of its Children and passes its Makes; a kind sluice doesn't
// register (a ReplicaSet) tells nothing, and passes. The owner walks use it
// through the kinds sluice does not queue, so that an object naming one of
// them as its controller is not counted by a queued ancestor that never
// counted it (a Pod under a JobSet under a TrainJob).
func (p *Policy) Made(parent client.Object, parentKind schema.GroupKind, child client.Object, childKind schema.GroupKind) bool {
	k, ok := p.known[parentKind]
	if !ok {
		return true
	}
	return (k.ChildrenOfAnyKind || slices.Contains(k.Children, childKind)) && (k.Makes == nil || k.Makes(parent, child))
}

// RunsAsParent is the enabled kind that runs its jobs as objects of obj's
// kind and that obj names as its controller (a TrainJob above a JobSet),
// with that reference; false when there is none.
func (p *Policy) RunsAsParent(obj client.Object) (Kind, *metav1.OwnerReference, bool) {
	ref := metav1.GetControllerOf(obj)
	if ref == nil {
		return Kind{}, nil, false
	}
	parent, ok := p.runsAsParents[kindOf(obj)]
	if !ok || schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).GroupKind() != parent.GVK.GroupKind() {
		return Kind{}, nil, false
	}
	return parent, ref, true
}

// AddExternalParent makes kind (of integrations.externalFrameworks) a
// parent of whatever it controls.
func (p *Policy) AddExternalParent(kind schema.GroupKind) {
	p.ParentKinds[kind] = true
	p.external[kind] = true
}

// MayOwn tells whether an object of kind child controlled by an object of
// kind owner may be counted by it: owner lists child among its Children,
// makes children of any kind, or is an external framework. (Whether it
// counts that very object is Makes's to say.)
func (p *Policy) MayOwn(owner, child schema.GroupKind) bool {
	return p.external[owner] || p.anyChildren[owner] || p.parentsOf[child][owner]
}

// kindOf is an object's kind, from the object when it says (owners read as
// metadata) or from the scheme; the empty kind when neither knows it.
func kindOf(obj client.Object) schema.GroupKind {
	if gvk := obj.GetObjectKind().GroupVersionKind(); gvk.Kind != "" {
		return gvk.GroupKind()
	}
	gvk, err := apiutil.GVKForObject(obj, scheme.Scheme)
	if err != nil {
		return schema.GroupKind{}
	}
	return gvk.GroupKind()
}

// ControllerKind is the kind of an object's controller owner.
func ControllerKind(obj client.Object) (schema.GroupKind, bool) {
	owner := metav1.GetControllerOf(obj)
	if owner == nil {
		return schema.GroupKind{}, false
	}
	gv, err := schema.ParseGroupVersion(owner.APIVersion)
	if err != nil {
		return schema.GroupKind{}, false
	}
	return schema.GroupKind{Group: gv.Group, Kind: owner.Kind}, true
}

// Placement is whether an object is queued, and where.
type Placement struct {
	Managed bool
	// QueueName is the LocalQueue ("" when queued only because of
	// manageJobsWithoutQueueName: it waits until it is given one).
	QueueName string
	// Defaulted is true when the queue is the namespace's default LocalQueue
	// rather than the object's label.
	Defaulted bool
	// CountedBy names the queued parent ("JobSet training") whose Workload
	// counts an object that opted in with standalone: the opt-in is
	// ignored, since it would charge the same pods twice.
	CountedBy string
}

// Decide applies the rules in order: an object owned by an enabled kind is
// its parent's (unless it opts out with kueue.x-k8s.io/standalone and its
// parent is not queued: a queued parent's Workload counts it already);
// only objects in the namespaces of managedJobsNamespaceSelector are
// queued: a queue-name label queues it there; otherwise the namespace's
// LocalQueue "default"; otherwise manageJobsWithoutQueueName. reader reads
// LocalQueues and Namespaces.
func (p *Policy) Decide(ctx context.Context, reader client.Reader, obj client.Object) (Placement, error) {
	return p.decide(ctx, reader, obj, maxStandaloneHops)
}

// maxStandaloneHops bounds how far up a chain of standalone objects Decide
// looks for a queued parent: owner references are writable, and a cycle of
// them must not recurse forever. Past it, the object is queued itself.
const maxStandaloneHops = 10

func (p *Policy) decide(ctx context.Context, reader client.Reader, obj client.Object, hops int) (Placement, error) {
	owned, countedBy, err := p.ownedByParent(ctx, reader, obj, hops)
	if owned || err != nil {
		return Placement{CountedBy: countedBy}, err
	}
	return p.QueueFor(ctx, reader, obj)
}

// QueueFor applies the queue rules of Decide alone, for a caller that has
// settled the owner question itself (the pod webhook's owner walk).
func (p *Policy) QueueFor(ctx context.Context, reader client.Reader, obj client.Object) (Placement, error) {
	// Only in the managed namespaces, whatever the labels (as Kueue 0.19
	// does): the webhooks see no others, and a Job they never suspended
	// must not be queued (and stopped) after it started.
	if managed, err := p.ManagesNamespace(ctx, reader, obj.GetNamespace()); err != nil || !managed {
		return Placement{}, err
	}
	if q := obj.GetLabels()[kueue.QueueNameLabel]; q != "" {
		return Placement{Managed: true, QueueName: q}, nil
	}
	lq := &kueue.LocalQueue{}
	err := reader.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: DefaultLocalQueue}, lq)
	switch {
	case err == nil:
		return Placement{Managed: true, QueueName: DefaultLocalQueue, Defaulted: true}, nil
	case !apierrors.IsNotFound(err):
		return Placement{}, fmt.Errorf("looking for LocalQueue %s/%s: %w", obj.GetNamespace(), DefaultLocalQueue, err)
	}
	return Placement{Managed: p.ManageWithoutQueueName}, nil
}

// ownedByParent tells whether the object's controller owner is an enabled
// kind that exists with the UID the reference names (read from the API
// server: only objects that claim such an owner pay for the read).
// ManagesNamespace tells whether sluice queues anything in a namespace
// (managedJobsNamespaceSelector). reader is the manager's cache; a
// namespace created a moment ago, not in it yet, is read from the API
// server rather than refused.
func (p *Policy) ManagesNamespace(ctx context.Context, reader client.Reader, name string) (bool, error) {
	ns := &corev1.Namespace{}
	key := client.ObjectKey{Name: name}
	err := reader.Get(ctx, key, ns)
	if apierrors.IsNotFound(err) && p.APIReader != nil {
		err = p.APIReader.Get(ctx, key, ns)
	}
	if err != nil {
		return false, fmt.Errorf("reading namespace %s: %w", name, err)
	}
	return p.Namespaces.Matches(labels.Set(ns.Labels)), nil
}

// ownedByParent tells whether the object's controller owner is an enabled
// kind that exists with the UID the reference names (read from the API
// server: only objects that claim such an owner pay for the read). A
// standalone object is its parent's only when the parent is queued (its
// Workload counts the object); countedBy then names the parent.
func (p *Policy) ownedByParent(ctx context.Context, reader client.Reader, obj client.Object, hops int) (owned bool, countedBy string, err error) {
	owner, err := p.countingOwner(ctx, reader, obj)
	if owner == nil || err != nil {
		return false, "", err
	}
	if obj.GetAnnotations()[kueue.StandaloneAnnotation] != "true" {
		return true, "", nil
	}
	countedBy, err = p.countedBy(ctx, reader, owner, hops)
	return countedBy != "", countedBy, err
}

// countingOwner is the object's controller owner when it is of a kind that
// counts objects of obj's kind, exists with the UID the reference names,
// and Makes obj; nil otherwise.
func (p *Policy) countingOwner(ctx context.Context, reader client.Reader, obj client.Object) (*metav1.PartialObjectMetadata, error) {
	ownerKind, ok := ControllerKind(obj)
	if !ok || !p.MayOwn(ownerKind, kindOf(obj)) {
		return nil, nil
	}
	owner, err := ReadOwner(ctx, p.APIReader, obj)
	if owner == nil || err != nil {
		return nil, err
	}
	k, ok := p.parents[ownerKind]
	if !ok || k.Makes == nil {
		return owner, nil
	}
	// Makes reads the whole owner: from the manager's cache (enabled kinds
	// are watched), else from the API server.
	full := k.NewObject()
	key := client.ObjectKeyFromObject(owner)
	err = reader.Get(ctx, key, full)
	if apierrors.IsNotFound(err) || (err == nil && full.GetUID() != owner.UID) {
		err = p.APIReader.Get(ctx, key, full)
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading owner %s %s of %s: %w", owner.Kind, owner.Name, obj.GetName(), err)
	case full.GetUID() != owner.UID || !k.Makes(full, obj):
		return nil, nil
	}
	return owner, nil
}

// Counts tells whether parent, an object of a kind that counts objects of
// child's kind and that child names as its controller, Makes child: the
// check the Pod webhook's owner walk makes on owners it read whole.
func (p *Policy) Counts(parent, child client.Object) bool {
	k, ok := p.parents[kindOf(parent)]
	return !ok || k.Makes == nil || k.Makes(parent, child)
}

// countedBy names ("JobSet training") the nearest queued ancestor whose
// Workload counts what owner counts: owner itself when sluice queues it,
// else whoever counts owner (a TrainJob above the JobSet above a Job), up
// to hops levels; "" when none does.
func (p *Policy) countedBy(ctx context.Context, reader client.Reader, owner *metav1.PartialObjectMetadata, hops int) (string, error) {
	if hops <= 0 {
		return "", nil
	}
	parent, err := p.decide(ctx, reader, owner, hops-1)
	switch {
	case err != nil:
		return "", err
	case parent.Managed:
		return owner.Kind + " " + owner.Name, nil
	case parent.CountedBy != "":
		return parent.CountedBy, nil
	}
	// Not queued itself: maybe its own parent's, which counts it.
	above, err := p.countingOwner(ctx, reader, owner)
	if above == nil || err != nil {
		return "", err
	}
	return p.countedBy(ctx, reader, above, hops-1)
}

// ReadOwner reads the metadata of the object's controller owner, in the
// object's namespace; nil when there is none, or when the object of that
// name has another UID than the reference names.
func ReadOwner(ctx context.Context, reader client.Reader, obj client.Object) (*metav1.PartialObjectMetadata, error) {
	ref := metav1.GetControllerOf(obj)
	if ref == nil {
		return nil, nil
	}
	owner := &metav1.PartialObjectMetadata{}
	owner.SetGroupVersionKind(schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind))
	err := reader.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: ref.Name}, owner)
	switch {
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading owner %s %s of %s: %w", ref.Kind, ref.Name, obj.GetName(), err)
	}
	if owner.UID != ref.UID {
		return nil, nil
	}
	return owner, nil
}

// OwnedByKind tells whether an object's controller owner is one of kinds. A
// Workload owned by a job kind keeps its reservation until its job stops.
func OwnedByKind(obj client.Object, kinds map[schema.GroupKind]bool) bool {
	owner, ok := ControllerKind(obj)
	return ok && kinds[owner]
}

// ExternalKinds reads integrations.externalFrameworks (Kind.version.group,
// validated by the configuration) into the kinds they name.
func ExternalKinds(names []string) map[schema.GroupKind]schema.GroupVersionKind {
	kinds := map[schema.GroupKind]schema.GroupVersionKind{}
	for _, name := range names {
		if gvk, _ := schema.ParseKindArg(name); gvk != nil {
			kinds[gvk.GroupKind()] = *gvk
		}
	}
	return kinds
}
