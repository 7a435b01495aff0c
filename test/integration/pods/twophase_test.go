package pods

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
	"github.com/sluicehq/sluice/internal/workload"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// A pod group's Workload waits for its admission checks with every Pod
// gated; two checks that disagree on a node selector finish it as
// FailedToStart, and no Pod starts.
func TestGroupWithConflictingCheckUpdatesNeverStarts(t *testing.T) {
	ns, _ := newQueue(t, "4")
	lq := &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lq"}}
	if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(lq), lq); err != nil {
		t.Fatal(err)
	}
	cq := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: string(lq.Spec.ClusterQueue)}}
	checks := []string{cluster.ActiveAdmissionCheck(t, "example.com/a").Name, cluster.ActiveAdmissionCheck(t, "example.com/b").Name}
	framework.Update(t, cluster.Client, cq, func() {
		cq.Spec.AdmissionChecksStrategy = &kueue.AdmissionChecksStrategy{AdmissionChecks: []kueue.AdmissionCheckStrategyRule{{Name: checks[0]}, {Name: checks[1]}}}
	})
	cluster.WaitActive(t, cq)
	group := cluster.Unique("group")
	pods := createGroup(t, ns, group, 2, nil)
	wl := groupWorkload(ns, group)
	reserved := cluster.WaitWorkload(t, wl, "reserved, waiting for its checks", func(wl *kueue.Workload) error {
		if !framework.Reserved(wl) || workload.IsAdmitted(wl) || len(wl.Status.AdmissionChecks) != 2 {
			return fmt.Errorf("reserved %v, admitted %v, checks %v", framework.Reserved(wl), workload.IsAdmitted(wl), wl.Status.AdmissionChecks)
		}
		return nil
	})
	if n, err := gatedCount(context.Background(), pods); err != nil || n != 2 {
		t.Fatalf("%d Pods gated (err %v) while the checks are pending, want 2", n, err)
	}
	for i, zone := range []string{"a", "b"} {
		cluster.SetCheck(t, wl, checks[i], kueue.CheckStateReady, func(c *kueue.AdmissionCheckState) {
			c.PodSetUpdates = []kueue.PodSetUpdate{{Name: reserved.Spec.PodSets[0].Name, NodeSelector: map[string]string{"zone": zone}}}
		})
	}
	cluster.WaitWorkload(t, wl, "finished as FailedToStart", func(wl *kueue.Workload) error {
		c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadFinished)
		if c == nil || c.Reason != integration.FinishedReasonFailedToStart || !strings.Contains(c.Message, "zone") {
			return fmt.Errorf("Finished: %+v", c)
		}
		return nil
	})
	if n, err := gatedCount(context.Background(), pods); err != nil || n != 2 {
		t.Fatalf("%d Pods gated (err %v) after the failure, want 2", n, err)
	}
}

// A pod group is PodsReady once its admitted count of Pods is ready.
func TestGroupPodsReady(t *testing.T) {
	ns, _ := newQueue(t, "4")
	group := cluster.Unique("group")
	pods := createGroup(t, ns, group, 2, nil)
	waitAllUngated(t, pods)
	wl := groupWorkload(ns, group)
	ready := func(p *corev1.Pod) {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(p), p); err != nil {
				return err
			}
			p.Status.Phase = corev1.PodRunning
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue})
			return cluster.Client.Status().Update(context.Background(), p)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	ready(pods[0])
	if got := cluster.WaitWorkload(t, wl, "admitted", func(wl *kueue.Workload) error {
		if !workload.IsAdmitted(wl) {
			return fmt.Errorf("not admitted")
		}
		return nil
	}); workload.PodsReady(got) {
		t.Fatal("PodsReady with one of two Pods ready")
	}
	ready(pods[1])
	cluster.WaitWorkload(t, wl, "PodsReady", func(wl *kueue.Workload) error {
		if !workload.PodsReady(wl) {
			return fmt.Errorf("PodsReady: %v", meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadPodsReady))
		}
		return nil
	})
}
