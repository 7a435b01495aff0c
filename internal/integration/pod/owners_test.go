package pod

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func ownedPod(name string, owner *corev1.Pod) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)}}
	if owner != nil {
		p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, corev1.SchemeGroupVersion.WithKind("Pod"))}
	}
	return p
}

// A tenant's owner references that loop (a owns b, b owns a) or run
// longer than the walk's bound end the walk: each owner read once, at most
// maxOwnerHops of them, and the walk returns instead of spinning.
func TestOwnerWalkEndsOnCyclesAndLongChains(t *testing.T) {
	walkable := map[schema.GroupKind]func() client.Object{{Kind: "Pod"}: func() client.Object { return &corev1.Pod{} }}

	a, b := ownedPod("a", nil), ownedPod("b", nil)
	a.OwnerReferences = ownedPod("x", b).OwnerReferences
	b.OwnerReferences = ownedPod("x", a).OwnerReferences
	child := ownedPod("child", a)
	reader := fake.NewClientBuilder().WithObjects(a, b).Build()
	chain, err := ancestors(context.Background(), reader, walkable, child)
	if err != nil || len(chain) != 2 || chain[0].obj.GetName() != "a" || chain[1].obj.GetName() != "b" {
		t.Fatalf("cycle: got %d ancestors (err %v), want a then b", len(chain), err)
	}

	var objs []client.Object
	var parent *corev1.Pod
	for i := range 3 * maxOwnerHops {
		p := ownedPod(fmt.Sprint("p", i), parent)
		objs = append(objs, p)
		parent = p
	}
	reader = fake.NewClientBuilder().WithObjects(objs...).Build()
	chain, err = ancestors(context.Background(), reader, walkable, ownedPod("leaf", parent))
	if err != nil || len(chain) != maxOwnerHops {
		t.Fatalf("long chain: got %d ancestors (err %v), want the bound %d", len(chain), err, maxOwnerHops)
	}
}
