// Package fairsharing tests fair sharing on a real API server: a manager
// with fairSharing enabled splits a cohort's idle quota by weight, level by
// level in a tree of cohorts, reports shares in status, and lets a queue
// below its fair share preempt the queue above it.
package fairsharing

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/manager"
	"github.com/sluicehq/sluice/test/integration/framework"
)

var cluster *framework.Cluster

func TestMain(m *testing.M) {
	os.Exit(framework.RunSuiteWith(m, &cluster, manager.Options{EnableWebhooks: true}, func(cfg *configapi.Configuration) {
		cfg.FairSharing = &configapi.FairSharing{}
	}))
}

// team is a ClusterQueue with nominal quota 0 and a LocalQueue of the same
// name, whose workloads can only borrow.
func team(t *testing.T, ns, cohort, flavor, name string, weight string) *kueue.ClusterQueue {
	t.Helper()
	cq := framework.ClusterQueue(cluster.Unique(name), cohort, framework.CPUQuota{Flavor: flavor, Nominal: "0"})
	if weight != "" {
		cq.Spec.FairSharing = &kueue.FairSharing{Weight: ptr.To(resource.MustParse(weight))}
	}
	cluster.MustCreate(t, cq, framework.LocalQueue(ns, name, cq.Name))
	return cq
}

// submit creates n one-CPU workloads in the LocalQueue and waits until all
// wait, so that they compete in the same cycles (the cohort has no quota
// yet: more than it can ever get).
func submit(t *testing.T, ns, lq string, n int) []*kueue.Workload {
	t.Helper()
	var out []*kueue.Workload
	for i := range n {
		wl := framework.Workload(ns, fmt.Sprintf("%s-%d", lq, i), lq, 0, 1, "1")
		cluster.MustCreate(t, wl)
		out = append(out, wl)
	}
	for _, wl := range out {
		cluster.WaitPending(t, wl, kueue.ReasonExceedsMaxQuota)
	}
	return out
}

// waitAdmittedCount waits until exactly want of wls hold quota and the
// cluster has settled there (the rest waiting for quota).
func waitAdmittedCount(t *testing.T, what string, wls []*kueue.Workload, want int) {
	t.Helper()
	framework.Eventually(t, fmt.Sprintf("%d of %s admitted", want, what), func(ctx context.Context) (bool, error) {
		got := 0
		for _, wl := range wls {
			current := &kueue.Workload{}
			if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(wl), current); err != nil {
				return false, err
			}
			if framework.Reserved(current) {
				got++
			}
		}
		if got != want {
			return false, fmt.Errorf("%d admitted", got)
		}
		return true, nil
	})
}

// waitShare waits until obj (a ClusterQueue or Cohort) reports the share.
func waitShare(t *testing.T, obj client.Object, want int64) {
	t.Helper()
	framework.Eventually(t, fmt.Sprintf("%s to report weightedShare %d", obj.GetName(), want), func(ctx context.Context) (bool, error) {
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err
		}
		var fs *kueue.FairSharingStatus
		switch o := obj.(type) {
		case *kueue.ClusterQueue:
			fs = o.Status.FairSharing
		case *kueue.Cohort:
			fs = o.Status.FairSharing
		}
		if fs == nil || fs.WeightedShare != want {
			return false, fmt.Errorf("fairSharing %+v", fs)
		}
		return true, nil
	})
}

func cohortWithPool(name, parent, flavor, cpu string) *kueue.Cohort {
	co := &kueue.Cohort{ObjectMeta: metav1.ObjectMeta{Name: name}}
	co.Spec.ParentName = kueue.CohortReference(parent)
	if cpu != "" {
		co.Spec.ResourceGroups = framework.CPUGroup(framework.CPUQuota{Flavor: flavor, Nominal: cpu})
	}
	return co
}

// Two teams without quota of their own borrow a lender's 6 idle CPU, 6
// one-CPU workloads each, all pending when the lender appears: the CPU are
// split by weight.
func TestIdleQuotaIsSplitByWeight(t *testing.T) {
	cases := []struct {
		name             string
		weightA, weightB string
		wantA, wantB     int
		shareA           int64
	}{
		{name: "1:1", weightA: "1", weightB: "1", wantA: 3, wantB: 3, shareA: 500},
		{name: "2:1", weightA: "2", weightB: "1", wantA: 4, wantB: 2, shareA: 333},
		{name: "0 gets what nobody else wants", weightA: "0", weightB: "1", wantA: 0, wantB: 6, shareA: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := cluster.Namespace(t, nil)
			rf := framework.Flavor(cluster.Unique("flavor"), nil)
			cohort := cluster.Unique("cohort")
			cluster.MustCreate(t, rf)
			a := team(t, ns, cohort, rf.Name, "a", tc.weightA)
			b := team(t, ns, cohort, rf.Name, "b", tc.weightB)
			cluster.WaitActive(t, a, b)
			as, bs := submit(t, ns, "a", 6), submit(t, ns, "b", 6)

			lender := framework.ClusterQueue(cluster.Unique("lender"), cohort, framework.CPUQuota{Flavor: rf.Name, Nominal: "6"})
			cluster.MustCreate(t, lender)
			waitAdmittedCount(t, "a's", as, tc.wantA)
			waitAdmittedCount(t, "b's", bs, tc.wantB)
			waitShare(t, a, tc.shareA)
		})
	}
}

// root (a pool of 8) -> left {a1, a2}, right {b}: the cohorts split the
// root's 8 first (4 and 4), then a1 and a2 split left's 4.
func TestSharesCompeteLevelByLevel(t *testing.T) {
	ns := cluster.Namespace(t, nil)
	rf := framework.Flavor(cluster.Unique("flavor"), nil)
	root, left, right := cluster.Unique("root"), cluster.Unique("left"), cluster.Unique("right")
	leftCohort, rightCohort := cohortWithPool(left, root, "", ""), cohortWithPool(right, root, "", "")
	cluster.MustCreate(t, rf, leftCohort, rightCohort)
	a1 := team(t, ns, left, rf.Name, "a1", "")
	a2 := team(t, ns, left, rf.Name, "a2", "")
	b := team(t, ns, right, rf.Name, "b", "")
	cluster.WaitActive(t, a1, a2, b)
	a1s, a2s, bs := submit(t, ns, "a1", 4), submit(t, ns, "a2", 4), submit(t, ns, "b", 8)

	rootCohort := cohortWithPool(root, "", rf.Name, "8")
	cluster.MustCreate(t, rootCohort)
	waitAdmittedCount(t, "a1's", a1s, 2)
	waitAdmittedCount(t, "a2's", a2s, 2)
	waitAdmittedCount(t, "b's", bs, 4)
	// Each cohort borrows 4 of the root's 8; a1 and a2 borrow 2 each of the
	// 8 that left (no quota of its own) can make available.
	waitShare(t, a1, 250)
	waitShare(t, leftCohort, 500)
	waitShare(t, rightCohort, 500)
	waitShare(t, rootCohort, 0)
}

// A team below its fair share takes back from the team above it: within
// its nominal quota by reclaim, beyond it by fair sharing, and stops where
// the shares meet.
func TestPreemptionTowardsFairShares(t *testing.T) {
	ns := cluster.Namespace(t, nil)
	rf := framework.Flavor(cluster.Unique("flavor"), nil)
	cohort := cluster.Unique("cohort")
	preemption := &kueue.ClusterQueuePreemption{ReclaimWithinCohort: kueue.PreemptionPolicyAny}
	a := framework.ClusterQueue(cluster.Unique("a"), cohort, framework.CPUQuota{Flavor: rf.Name, Nominal: "3"})
	b := framework.ClusterQueue(cluster.Unique("b"), cohort, framework.CPUQuota{Flavor: rf.Name, Nominal: "3"})
	lender := framework.ClusterQueue(cluster.Unique("lender"), cohort, framework.CPUQuota{Flavor: rf.Name, Nominal: "2"})
	a.Spec.Preemption, b.Spec.Preemption = preemption, preemption.DeepCopy()
	cluster.MustCreate(t, rf, a, b, lender, framework.LocalQueue(ns, "a", a.Name), framework.LocalQueue(ns, "b", b.Name))
	cluster.WaitActive(t, a, b, lender)

	var bs []*kueue.Workload
	for i := range 8 {
		wl := framework.Workload(ns, fmt.Sprintf("b-%d", i), "b", 0, 1, "1")
		cluster.MustCreate(t, wl)
		bs = append(bs, wl)
	}
	cluster.WaitAdmitted(t, bs...) // b holds all 8 CPU, 5 of them borrowed
	var as []*kueue.Workload
	for i := range 4 {
		wl := framework.Workload(ns, fmt.Sprintf("a-%d", i), "a", 0, 1, "1")
		cluster.MustCreate(t, wl)
		as = append(as, wl)
	}
	// a's first 3 reclaim its nominal quota; the 4th borrows 1 of 8 (125)
	// against b's 2 of 8 before and 1 after (125): allowed. A 5th would not
	// be.
	cluster.WaitAdmitted(t, as...)
	waitAdmittedCount(t, "b's", bs, 4)
	causes := map[string]int{}
	for _, wl := range bs {
		current := &kueue.Workload{}
		if err := cluster.Client.Get(t.Context(), client.ObjectKeyFromObject(wl), current); err != nil {
			t.Fatal(err)
		}
		for _, c := range current.Status.Conditions {
			if c.Type == kueue.WorkloadPreempted && c.Status == metav1.ConditionTrue {
				causes[c.Reason]++
				if c.Reason == kueue.InCohortFairSharingReason && !strings.Contains(c.Message, "fair sharing within the cohort, by ClusterQueue "+a.Name) {
					t.Errorf("Preempted message %q doesn't say why", c.Message)
				}
			}
		}
	}
	if causes[kueue.InCohortReclamationReason] != 3 || causes[kueue.InCohortFairSharingReason] != 1 {
		t.Errorf("b's workloads preempted by cause %v, want 3 %s and 1 %s", causes, kueue.InCohortReclamationReason, kueue.InCohortFairSharingReason)
	}
	extra := framework.Workload(ns, "a-extra", "a", 0, 1, "1")
	cluster.MustCreate(t, extra)
	cluster.WaitPending(t, extra, kueue.ReasonWaitingForQuota)
	waitShare(t, a, 125)
	waitShare(t, b, 125)
}
