package pods

import (
	"context"
	"fmt"
	"maps"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// newStatefulSet creates StatefulSet ns/db of 1-CPU Pods in LocalQueue lq.
func newStatefulSet(t *testing.T, ns string, replicas int32) *appsv1.StatefulSet {
	t.Helper()
	labels := map[string]string{"app": "db"}
	tmpl := newPodTemplate()
	tmpl.Labels = labels
	tmpl.Spec.RestartPolicy = corev1.RestartPolicyAlways
	s := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db", Labels: map[string]string{kueue.QueueNameLabel: "lq"}},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels}, ServiceName: "db", Template: tmpl}}
	cluster.MustCreate(t, s)
	return s
}

// statefulSetPod creates the i-th Pod of s, as its controller would.
func statefulSetPod(t *testing.T, s *appsv1.StatefulSet, i int) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: fmt.Sprintf("%s-%d", s.Name, i),
		Labels: maps.Clone(s.Spec.Template.Labels), Annotations: maps.Clone(s.Spec.Template.Annotations)},
		Spec: *s.Spec.Template.Spec.DeepCopy()}
	ownedBy(p, s, "StatefulSet", "apps/v1")
	cluster.MustCreate(t, p)
	return p
}

func scaleStatefulSet(t *testing.T, s *appsv1.StatefulSet, replicas int32) {
	t.Helper()
	if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(s), s); err != nil {
		t.Fatal(err)
	}
	s.Spec.Replicas = ptr.To(replicas)
	if err := cluster.Client.Update(context.Background(), s); err != nil {
		t.Fatal(err)
	}
}

// A StatefulSet scaled down gives back the quota of the Pods it no longer
// has; scaled up again, it must not take those places back without
// admission: another Workload may hold them by then.
func TestShrunkStatefulSetGrowsOnlyThroughAdmission(t *testing.T) {
	ns, _ := newQueue(t, "3")
	s := newStatefulSet(t, ns, 3)
	pods := []*corev1.Pod{statefulSetPod(t, s, 0), statefulSetPod(t, s, 1), statefulSetPod(t, s, 2)}
	waitAllUngated(t, pods)

	scaleStatefulSet(t, s, 1)
	for _, p := range pods[1:] {
		if err := cluster.Client.Delete(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	wl := groupWorkload(ns, "statefulset-db")
	framework.Eventually(t, "the group to give back two places and its removed Pods to be gone", func(ctx context.Context) (bool, error) {
		for _, p := range pods[1:] {
			if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(p), &corev1.Pod{}); !apierrors.IsNotFound(err) {
				return false, client.IgnoreNotFound(err)
			}
		}
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(wl), wl); err != nil {
			return false, err
		}
		reclaimable := int32(0)
		for _, rp := range wl.Status.ReclaimablePods {
			reclaimable += rp.Count
		}
		return reclaimable == 2, nil
	})
	// The two places given back go to another Workload.
	other := newPod(ns, "lq")
	other.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("2")
	cluster.MustCreate(t, other)
	waitPod(t, other, "the other Pod to start", ungated)

	scaleStatefulSet(t, s, 2)
	grown := statefulSetPod(t, s, 1)
	framework.Eventually(t, "the grown group to wait for admission at its new size", func(ctx context.Context) (bool, error) {
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(wl), wl); err != nil {
			return false, err
		}
		total := int32(0)
		for _, ps := range wl.Spec.PodSets {
			total += ps.Count
		}
		waiting, _ := pending(wl)
		return waiting && total == 2, nil
	})
	if n, err := gatedCount(context.Background(), []*corev1.Pod{grown}); err != nil || n != 1 {
		t.Fatalf("the new Pod started without admission (gated: %d, err %v)", n, err)
	}
}
