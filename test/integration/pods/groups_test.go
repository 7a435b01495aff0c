package pods

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// groupPod is a 1-CPU Pod of group name, of total Pods.
func groupPod(ns, name string, total int) *corev1.Pod {
	p := newPod(ns, "lq")
	p.Labels[kueue.PodGroupNameLabel] = name
	p.Annotations = map[string]string{kueue.PodGroupTotalCountAnno: fmt.Sprint(total)}
	return p
}

// createGroup creates n Pods of group, each changed by modify (may be nil)
// before it is created, and returns them.
func createGroup(t *testing.T, ns, group string, n int, modify func(i int, p *corev1.Pod)) []*corev1.Pod {
	t.Helper()
	var pods []*corev1.Pod
	for i := range n {
		p := groupPod(ns, group, n)
		if modify != nil {
			modify(i, p)
		}
		cluster.MustCreate(t, p)
		pods = append(pods, p)
	}
	return pods
}

// gatedCount counts the group's Pods still at sluice's gate.
func gatedCount(ctx context.Context, pods []*corev1.Pod) (int, error) {
	n := 0
	for _, p := range pods {
		current := &corev1.Pod{}
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(p), current); err != nil {
			return 0, err
		}
		if isGated(current) {
			n++
		}
	}
	return n, nil
}

func groupWorkload(ns, name string) *kueue.Workload {
	return &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

// expectAllGated checks, once the group's Workload exists and waits, that
// none of its Pods started.
func expectAllGated(t *testing.T, ns, group string, pods []*corev1.Pod) {
	t.Helper()
	framework.Eventually(t, "the group's Workload to wait for quota", func(ctx context.Context) (bool, error) {
		wl := groupWorkload(ns, group)
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(wl), wl); err != nil {
			return false, err
		}
		return pending(wl)
	})
	n, err := gatedCount(context.Background(), pods)
	if err != nil || n != len(pods) {
		t.Fatalf("%d of %d Pods gated (err %v), want all", n, len(pods), err)
	}
}

func pending(wl *kueue.Workload) (bool, error) {
	for _, c := range wl.Status.Conditions {
		if c.Type == kueue.WorkloadQuotaReserved && c.Status == metav1.ConditionFalse {
			return true, nil
		}
	}
	return false, fmt.Errorf("conditions %v", wl.Status.Conditions)
}

func waitAllUngated(t *testing.T, pods []*corev1.Pod) {
	t.Helper()
	framework.Eventually(t, "every Pod of the group to start", func(ctx context.Context) (bool, error) {
		n, err := gatedCount(ctx, pods)
		return n == 0, err
	})
}

func TestGroupWaitsForAllItsPods(t *testing.T) {
	ns, _ := newQueue(t, "8")
	group := cluster.Unique("group")
	var pods []*corev1.Pod
	for range 2 {
		p := groupPod(ns, group, 3)
		cluster.MustCreate(t, p)
		pods = append(pods, p)
	}
	// Two of three: no Workload yet, so nothing can start. A later single
	// Pod's Workload shows the group was looked at by then.
	noWorkloadFor(t, pods[0])
	if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(groupWorkload(ns, group)), &kueue.Workload{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a group Workload exists before all its Pods (err %v)", err)
	}
	last := groupPod(ns, group, 3)
	cluster.MustCreate(t, last)
	pods = append(pods, last)
	waitAllUngated(t, pods)
	wl := groupWorkload(ns, group)
	if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(wl), wl); err != nil {
		t.Fatal(err)
	}
	if len(wl.Spec.PodSets) != 1 || wl.Spec.PodSets[0].Count != 3 {
		t.Errorf("podSets %+v, want one shape of 3", wl.Spec.PodSets)
	}

	for _, p := range pods {
		setPhase(t, p, corev1.PodSucceeded)
	}
	framework.Eventually(t, "the group's Workload to finish", func(ctx context.Context) (bool, error) {
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(wl), wl); err != nil {
			return false, err
		}
		return finishedWith(integration.FinishedReasonSucceeded)(wl) == nil, nil
	})
	for _, p := range pods {
		waitPod(t, p, "to lose its finalizer", func(p *corev1.Pod) error {
			if slices.Contains(p.Finalizers, kueue.ManagedLabel) {
				return fmt.Errorf("finalizers %v", p.Finalizers)
			}
			return nil
		})
	}
}

// A 3-Pod group with quota for 2: nothing runs until quota for 3 exists,
// then all three start together. The executors are standalone Pods of a
// driver, as in the spec's Spark gang scenario.
func TestGroupIsAdmittedAllOrNothing(t *testing.T) {
	ns, _ := newQueue(t, "3")
	driver := newPod(ns, "lq")
	cluster.MustCreate(t, driver)
	waitPod(t, driver, "to start", ungated) // 1 CPU of 3: 2 left
	group := cluster.Unique("executors")
	pods := createGroup(t, ns, group, 3, func(_ int, p *corev1.Pod) {
		standalone(p)
		ownedBy(p, driver, "Pod", "v1")
	})
	expectAllGated(t, ns, group, pods)
	setPhase(t, driver, corev1.PodSucceeded) // 3 CPU free
	waitAllUngated(t, pods)
}

func TestGroupOfTwoShapes(t *testing.T) {
	ns, _ := newQueue(t, "8")
	group := cluster.Unique("roles")
	pods := createGroup(t, ns, group, 3, func(i int, p *corev1.Pod) {
		if i == 0 {
			p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("2")
		}
	})
	waitAllUngated(t, pods)
	wl := groupWorkload(ns, group)
	if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(wl), wl); err != nil {
		t.Fatal(err)
	}
	counts := []int32{}
	for _, ps := range wl.Spec.PodSets {
		counts = append(counts, ps.Count)
	}
	slices.Sort(counts)
	if !slices.Equal(counts, []int32{1, 2}) {
		t.Errorf("podSet counts %v, want a podSet of 1 (2 CPU) and one of 2 (1 CPU)", counts)
	}
}

func TestGroupValidation(t *testing.T) {
	ns, _ := newQueue(t, "3")
	cases := []struct {
		name   string
		modify func(p *corev1.Pod)
		want   string
	}{
		{"name without count", func(p *corev1.Pod) { delete(p.Annotations, kueue.PodGroupTotalCountAnno) }, kueue.PodGroupTotalCountAnno},
		{"count without name", func(p *corev1.Pod) { delete(p.Labels, kueue.PodGroupNameLabel) }, kueue.PodGroupNameLabel},
		{"count not positive", func(p *corev1.Pod) { p.Annotations[kueue.PodGroupTotalCountAnno] = "0" }, "must be a positive integer"},
		{"count not a number", func(p *corev1.Pod) { p.Annotations[kueue.PodGroupTotalCountAnno] = "three" }, "must be a positive integer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := groupPod(ns, "g", 2)
			tc.modify(p)
			err := cluster.Client.Create(context.Background(), p)
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want Invalid mentioning %q", err, tc.want)
			}
		})
	}
	t.Run("name immutable", func(t *testing.T) {
		p := groupPod(ns, cluster.Unique("g"), 2)
		cluster.MustCreate(t, p)
		err := cluster.TryUpdate(p, func() { p.Labels[kueue.PodGroupNameLabel] = "other" })
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "immutable") {
			t.Errorf("got %v, want Invalid ... immutable", err)
		}
	})
}

// A serving group keeps its admission while a Pod is replaced: the new Pod
// of the same group starts in the place of the one that went.
func TestServingGroupReplacesPods(t *testing.T) {
	ns, _ := newQueue(t, "2")
	group := cluster.Unique("serving")
	pods := createGroup(t, ns, group, 2, func(_ int, p *corev1.Pod) { p.Annotations[kueue.PodGroupServingAnno] = "true" })
	waitAllUngated(t, pods)
	wl := groupWorkload(ns, group)
	if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(wl), wl); err != nil {
		t.Fatal(err)
	}
	// One more Pod while both run: no room in the admission, it waits.
	extra := groupPod(ns, group, 2)
	extra.Annotations[kueue.PodGroupServingAnno] = "true"
	cluster.MustCreate(t, extra)
	if err := cluster.Client.Delete(context.Background(), pods[0]); err != nil {
		t.Fatal(err)
	}
	waitPod(t, extra, "to start in the place of the deleted Pod", ungated)
	current := groupWorkload(ns, group)
	if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(current), current); err != nil {
		t.Fatal(err)
	}
	if current.UID != wl.UID || current.Status.Admission == nil {
		t.Errorf("the group lost its admission while a Pod was replaced (uid %s -> %s, admission %v)", wl.UID, current.UID, current.Status.Admission)
	}
}

// A failed Pod of a group is let go and replaced by a new Pod of the same
// group; a Pod that may not be retried fails the whole group.
func TestGroupPodFailures(t *testing.T) {
	ns, _ := newQueue(t, "4")
	t.Run("retried", func(t *testing.T) {
		group := cluster.Unique("retry")
		pods := createGroup(t, ns, group, 2, nil)
		waitAllUngated(t, pods)
		setPhase(t, pods[0], corev1.PodFailed)
		waitPod(t, pods[0], "to be let go", func(p *corev1.Pod) error {
			if slices.Contains(p.Finalizers, kueue.ManagedLabel) {
				return fmt.Errorf("finalizers %v", p.Finalizers)
			}
			return nil
		})
		replacement := groupPod(ns, group, 2)
		cluster.MustCreate(t, replacement)
		waitPod(t, replacement, "to start in the failed Pod's place", ungated)
		wl := groupWorkload(ns, group)
		if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(wl), wl); err != nil {
			t.Fatal(err)
		}
		if finishedWith(integration.FinishedReasonFailed)(wl) == nil {
			t.Error("a retriable failure finished the group")
		}
	})
	t.Run("not retriable", func(t *testing.T) {
		group := cluster.Unique("once")
		pods := createGroup(t, ns, group, 2, func(_ int, p *corev1.Pod) { p.Annotations[kueue.RetriableInGroupAnno] = "false" })
		waitAllUngated(t, pods)
		setPhase(t, pods[1], corev1.PodFailed)
		framework.Eventually(t, "the group to finish Failed", func(ctx context.Context) (bool, error) {
			wl := groupWorkload(ns, group)
			if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(wl), wl); err != nil {
				return false, err
			}
			return true, finishedWith(integration.FinishedReasonFailed)(wl)
		})
	})
}
