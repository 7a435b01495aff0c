package pod

import (
	"context"
	"fmt"
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// +kubebuilder:rbac:groups=apps,resources=replicasets;deployments,verbs=get
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch

// podKind is the Pod's kind as owner references name it.
var podKind = schema.GroupKind{Kind: "Pod"}

// maxOwnerHops bounds the owner walk of the standalone opt-in.
const maxOwnerHops = 10

// walkable are the owner kinds the walk follows: the kinds sluice knows
// (enabled or not), Pods, and ReplicaSets between a Deployment and its
// Pods. An owner of any other kind ends the walk.
func (w *Webhook) walkable() map[schema.GroupKind]func() client.Object {
	kinds := map[schema.GroupKind]func() client.Object{
		{Group: "", Kind: "Pod"}:            func() client.Object { return &corev1.Pod{} },
		{Group: "apps", Kind: "ReplicaSet"}: func() client.Object { return &appsv1.ReplicaSet{} },
	}
	maps.Copy(kinds, w.KnownOwners)
	return kinds
}

// ancestor is one owner found by the walk.
type ancestor struct {
	kind schema.GroupKind
	obj  client.Object
}

// ancestors follows controller owner references upward from obj: only
// through walkable kinds, checking each owner's UID, stopping at a missing
// owner, a cycle or after maxOwnerHops. reader must read from the API
// server: owners need not be in the manager's cache.
func ancestors(ctx context.Context, reader client.Reader, walkable map[schema.GroupKind]func() client.Object, obj client.Object) ([]ancestor, error) {
	var out []ancestor
	seen := map[types.UID]bool{obj.GetUID(): true}
	current := obj
	for range maxOwnerHops {
		ref := metav1.GetControllerOf(current)
		if ref == nil || seen[ref.UID] {
			break
		}
		a, err := controllerOwner(ctx, walkable, current, reader)
		if a == nil || err != nil {
			return out, err
		}
		seen[ref.UID] = true
		out = append(out, *a)
		current = a.obj
	}
	return out, nil
}

// controllerOwner reads obj's controller owner, in obj's namespace, from the
// first reader that has it with the UID the reference names. It is nil when
// there is none: no reference, a kind the walk doesn't follow, or no such
// owner (missing, or another object of that name).
func controllerOwner(ctx context.Context, walkable map[schema.GroupKind]func() client.Object, obj client.Object, readers ...client.Reader) (*ancestor, error) {
	ref := metav1.GetControllerOf(obj)
	if ref == nil {
		return nil, nil
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, nil
	}
	kind := schema.GroupKind{Group: gv.Group, Kind: ref.Kind}
	newObj, ok := walkable[kind]
	if !ok {
		return nil, nil
	}
	key := client.ObjectKey{Namespace: obj.GetNamespace(), Name: ref.Name}
	for _, reader := range readers {
		owner := newObj()
		err := reader.Get(ctx, key, owner)
		if err == nil && owner.GetUID() == ref.UID {
			return &ancestor{kind: kind, obj: owner}, nil
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("reading owner %s %s: %w", ref.Kind, ref.Name, err)
		}
	}
	return nil, nil
}
