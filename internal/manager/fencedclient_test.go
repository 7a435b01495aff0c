package manager

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

type fixedFence struct{ open bool }

func (f *fixedFence) WritableUntil() (time.Time, bool) { return time.Time{}, f.open }

func TestFencedClientWritesOnlyWithinTheFence(t *testing.T) {
	ctx := context.Background()
	base := fake.NewClientBuilder().WithObjects(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "there"}}).Build()
	fence := &fixedFence{}
	c := fencedClient(base, fence)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "new"}}
	if err := c.Create(ctx, cm); !errors.Is(err, errNotSurelyLeader) {
		t.Fatalf("create outside the fence: %v, want refused", err)
	}
	there := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "there"}, there); err != nil {
		t.Fatalf("reads are not fenced: %v", err)
	}
	if err := c.Delete(ctx, there); !errors.Is(err, errNotSurelyLeader) {
		t.Fatalf("delete outside the fence: %v, want refused", err)
	}
	if err := c.Status().Update(ctx, there); !errors.Is(err, errNotSurelyLeader) {
		t.Fatalf("status write outside the fence: %v, want refused", err)
	}
	fence.open = true
	if err := c.Create(ctx, cm); err != nil {
		t.Fatalf("create within the fence: %v", err)
	}
}
