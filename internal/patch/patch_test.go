package patch

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func TestStaleReadConflictsInsteadOfOverwriting(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().WithObjects(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm"}}).Build()
	read := func() *corev1.ConfigMap {
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "cm"}, cm); err != nil {
			t.Fatal(err)
		}
		return cm
	}
	stale, fresh := read(), read()
	if _, err := Object(ctx, c, fresh, Always(func() { fresh.Labels = map[string]string{"by": "first"} })); err != nil {
		t.Fatalf("a write on the current version: %v", err)
	}
	changed, err := Object(ctx, c, stale, Always(func() { stale.Labels = map[string]string{"by": "second"} }))
	if !changed || !apierrors.IsConflict(err) {
		t.Fatalf("a write on a stale read: changed %v, err %v; want a conflict", changed, err)
	}
	if got := read().Labels["by"]; got != "first" {
		t.Fatalf("label by = %q: the stale write overwrote the first", got)
	}
}

func TestNoChangeSendsNothing(t *testing.T) {
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm"}}
	sent := 0
	c := fake.NewClientBuilder().WithObjects(cm.DeepCopy()).WithInterceptorFuncs(interceptorCounting(&sent)).Build()
	if err := c.Get(ctx, client.ObjectKeyFromObject(cm), cm); err != nil {
		t.Fatal(err)
	}
	changed, err := Object(ctx, c, cm, func() bool { return false })
	if changed || err != nil || sent != 0 {
		t.Fatalf("changed %v, err %v, %d patches sent; want nothing sent", changed, err, sent)
	}
}

func interceptorCounting(sent *int) interceptor.Funcs {
	return interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
		*sent++
		return c.Patch(ctx, obj, p, opts...)
	}}
}
