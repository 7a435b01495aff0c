package pod

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/apis/scheme"
	"github.com/sluicehq/sluice/internal/integration"
)

// fakeRecorder is a FakeRecorder with the annotated events the framework's
// recorder interface asks for.
type fakeRecorder struct{ *events.FakeRecorder }

// A running queued Pod whose managed label was stripped behind the
// webhook's back drops out of the manager's cache (it caches managed Pods
// only). The reconciler must not take it for deleted and free its quota:
// it puts the label back, and the Pod's Workload stays.
func TestPodThatLostItsLabelIsTrackedAgain(t *testing.T) {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "uid-p",
		Labels: map[string]string{kueue.QueueNameLabel: "lq"}, Finalizers: []string{kueue.ManagedLabel}},
		Spec: corev1.PodSpec{NodeName: "node", Containers: []corev1.Container{{Name: "c"}}}}
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: integration.WorkloadName(Kind.GVK, p.Name, p.UID),
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(p, Kind.GVK)}}}
	api := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(p, wl).
		WithIndex(&kueue.Workload{}, integration.IndexWorkloadOwner, integration.WorkloadOwnerKeys).Build()
	// The cache: Pods without the managed label are not in it.
	cached := interceptor.NewClient(api, interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if err := c.Get(ctx, key, obj, opts...); err != nil {
			return err
		}
		if _, isPod := obj.(*corev1.Pod); isPod && obj.GetLabels()[kueue.ManagedLabel] != "true" {
			return apierrors.NewNotFound(corev1.Resource("pods"), key.Name)
		}
		return nil
	}})
	r := &integration.Reconciler{Client: cached, APIReader: api, Kind: Kind, Recorder: fakeRecorder{events.NewFakeRecorder(10)},
		Clock: clocktesting.NewFakeClock(metav1.Now().Time)}
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(p)}); err != nil {
		t.Fatal(err)
	}
	got := &corev1.Pod{}
	if err := api.Get(context.Background(), client.ObjectKeyFromObject(p), got); err != nil {
		t.Fatal(err)
	}
	if got.Labels[kueue.ManagedLabel] != "true" {
		t.Errorf("labels %v: the managed label was not put back", got.Labels)
	}
	if err := api.Get(context.Background(), client.ObjectKeyFromObject(wl), &kueue.Workload{}); err != nil {
		t.Errorf("the Pod's Workload is gone (%v): its quota would be free while the Pod runs", err)
	}
}
