package scheduler

import (
	"fmt"
	"reflect"
	"testing"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/quota"
	"github.com/sluicehq/sluice/internal/workload"
)

var bothStrategies = &FairSharing{Strategies: []FairStrategy{LessThanOrEqualToFinalShare, LessThanInitialShare}}

// Two teams of nominal 2 borrow a lender's idle 8 CPU, one CPU at a time:
// with fair sharing the 8 are split by weight, not by who queued first.
func TestFairSharingSplitsBorrowingByWeight(t *testing.T) {
	cases := []struct {
		name         string
		fair         bool
		weightA      int64
		weightB      int64
		wantA, wantB int
	}{
		{name: "without fair sharing the older queue takes everything", fair: false, weightA: 1000, weightB: 1000, wantA: 10, wantB: 2},
		{name: "weights 1:1", fair: true, weightA: 1000, weightB: 1000, wantA: 6, wantB: 6},
		// Shares after admission: A borrows a/12 per mille halved, B b/12;
		// ties go to A's older workloads: A borrows 6, B 2.
		{name: "weights 2:1", fair: true, weightA: 2000, weightB: 1000, wantA: 8, wantB: 4},
		{name: "weight 0 gets only what nobody else wants", fair: true, weightA: 1000, weightB: 0, wantA: 10, wantB: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(flavor("f"))
			a := w.queue("a", kueue.BestEffortFIFO, kueue.MayStopSearch, true, flavorQuota{name: "f", nominal: 2})
			b := w.queue("b", kueue.BestEffortFIFO, kueue.MayStopSearch, true, flavorQuota{name: "f", nominal: 2})
			w.queue("lender", kueue.BestEffortFIFO, kueue.MayStopSearch, true, flavorQuota{name: "f", nominal: 8})
			a.Node.Weight, b.Node.Weight = tc.weightA, tc.weightB
			snap := w.finalize()
			if tc.fair {
				snap.FairSharing = bothStrategies
			}
			var pending []*workload.Info
			for i := range 12 {
				pending = append(pending, wl(fmt.Sprintf("a%02d", i), "a", 0, i, 1, "1"), wl(fmt.Sprintf("b%02d", i), "b", 0, 100+i, 1, "1"))
			}
			admitted := map[string]int{}
			for _, d := range Schedule(snap, pending) {
				if d.Admitted() {
					admitted[d.ClusterQueue]++
				}
			}
			if admitted["a"] != tc.wantA || admitted["b"] != tc.wantB {
				t.Errorf("admitted a=%d b=%d, want a=%d b=%d", admitted["a"], admitted["b"], tc.wantA, tc.wantB)
			}
			if tc.fair {
				if got, want := a.Node.WeightedShare(), shareOf(int64(tc.wantA-2), 12, tc.weightA); got != want {
					t.Errorf("a's share %d, want %d", got, want)
				}
			}
		})
	}
}

func shareOf(borrowed, lendable, weight int64) int64 {
	if borrowed == 0 {
		return 0
	}
	if weight == 0 {
		return 1<<63 - 1
	}
	return borrowed * 1000 / lendable * 1000 / weight
}

// In a three-level tree shares compete level by level: the two cohorts
// split the root's idle quota evenly before their queues split each half.
func TestFairSharingThreeLevels(t *testing.T) {
	w := newWorld(flavor("f"))
	// root (pool 8) -> left {a1, a2, a3}, right {b}; every queue nominal 0.
	root := w.cohort
	root.Quotas = limitsCPU("f", 8)
	left, right := newCohortNode("left"), newCohortNode("right")
	attach(root, left)
	attach(root, right)
	for _, name := range []string{"a1", "a2", "a3"} {
		attach(left, w.queue(name, kueue.BestEffortFIFO, kueue.MayStopSearch, false, flavorQuota{name: "f"}).Node)
	}
	attach(right, w.queue("b", kueue.BestEffortFIFO, kueue.MayStopSearch, false, flavorQuota{name: "f"}).Node)
	snap := w.finalize()
	snap.FairSharing = bothStrategies
	var pending []*workload.Info
	for i := range 8 {
		for _, q := range []string{"a1", "a2", "a3", "b"} {
			pending = append(pending, wl(fmt.Sprintf("%s-%d", q, i), q, 0, i, 1, "1"))
		}
	}
	admitted := map[string]int{}
	for _, d := range Schedule(snap, pending) {
		if d.Admitted() {
			admitted[d.ClusterQueue]++
		}
	}
	if got := admitted["a1"] + admitted["a2"] + admitted["a3"]; got != 4 || admitted["b"] != 4 {
		t.Errorf("left got %d (%v), right %d; want 4 and 4", got, admitted, admitted["b"])
	}
	// Left has no quota of its own, yet its queues compare by what the root
	// makes available through it: 2, 1, 1 (ties by the workloads' order).
	if admitted["a1"] != 2 || admitted["a2"] != 1 || admitted["a3"] != 1 {
		t.Errorf("left's queues got %v, want a1=2 a2=1 a3=1", admitted)
	}
}

// A queue below its fair share takes back from the queue with the highest
// share, as far as the strategies allow.
func TestFairSharingPreemption(t *testing.T) {
	cases := []struct {
		name       string
		strategies []FairStrategy
		aUses      int64
		bAdmitted  []*Candidate
		pendingCPU string
		wantVictim []string
		wantReason string
	}{
		{
			name:  "within its nominal quota: reclaim",
			aUses: 0, bAdmitted: []*Candidate{cand("ns/b1", "b", 0, 0, 6), cand("ns/b2", "b", 0, 10, 6)},
			pendingCPU: "2", wantVictim: []string{"ns/b2"}, wantReason: kueue.InCohortReclamationReason,
		},
		{
			// A borrows 1 of 12 after (83); B borrows 4 of 12 (333), 3 after
			// losing one CPU (250).
			name:  "borrowing below the victim's share",
			aUses: 4, bAdmitted: []*Candidate{cand("ns/b1", "b", 0, 0, 4), cand("ns/b2", "b", 0, 10, 3), cand("ns/b3", "b", 0, 20, 1)},
			pendingCPU: "1", wantVictim: []string{"ns/b3"}, wantReason: kueue.InCohortFairSharingReason,
		},
		{
			// A would borrow 3 of 12 (250) against B's 2 (166) before and 1
			// (83) after: neither strategy allows it.
			name:  "not above the victim's share",
			aUses: 5, bAdmitted: []*Candidate{cand("ns/b1", "b", 0, 0, 5), cand("ns/b2", "b", 0, 10, 1)},
			pendingCPU: "2", wantVictim: nil,
		},
		{
			// A would borrow 2 (166): below B's 3 before (250) but above B's
			// 1 after (83).
			name: "LessThanInitialShare alone allows it", strategies: []FairStrategy{LessThanInitialShare},
			aUses: 4, bAdmitted: []*Candidate{cand("ns/b1", "b", 0, 0, 3), cand("ns/b2", "b", 0, 10, 2), cand("ns/b3", "b", 0, 20, 2)},
			pendingCPU: "2", wantVictim: []string{"ns/b3"}, wantReason: kueue.InCohortFairSharingReason,
		},
		{
			name: "LessThanOrEqualToFinalShare alone refuses it", strategies: []FairStrategy{LessThanOrEqualToFinalShare},
			aUses: 4, bAdmitted: []*Candidate{cand("ns/b1", "b", 0, 0, 3), cand("ns/b2", "b", 0, 10, 2), cand("ns/b3", "b", 0, 20, 2)},
			pendingCPU: "2", wantVictim: nil,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(flavor("f"))
			a := w.queue("a", kueue.BestEffortFIFO, kueue.MayStopSearch, true, flavorQuota{name: "f", nominal: 4})
			a.ReclaimWithinCohort = kueue.PreemptionPolicyAny
			w.queue("b", kueue.BestEffortFIFO, kueue.MayStopSearch, true, flavorQuota{name: "f", nominal: 4})
			w.queue("lender", kueue.BestEffortFIFO, kueue.MayStopSearch, true, flavorQuota{name: "f", nominal: 4})
			admitted := tc.bAdmitted
			if tc.aUses > 0 {
				admitted = append(admitted, cand("ns/a-running", "a", 100, 0, tc.aUses))
			}
			snap := w.finalize()
			chargeAdmitted(snap, admitted, nil)
			snap.FairSharing = bothStrategies
			if tc.strategies != nil {
				snap.FairSharing = &FairSharing{Strategies: tc.strategies}
			}
			ds := Schedule(snap, []*workload.Info{wl("mine", "a", 0, 50, 1, tc.pendingCPU)})
			if got := victimKeys(ds[0]); !reflect.DeepEqual(got, tc.wantVictim) {
				t.Fatalf("victims %v (%s: %s), want %v", got, ds[0].Reason, ds[0].Message, tc.wantVictim)
			}
			for _, v := range tc.wantVictim {
				if got := ds[0].PreemptionReasons[v]; got != tc.wantReason {
					t.Errorf("reason for %s: %q, want %q", v, got, tc.wantReason)
				}
			}
		})
	}
}

func limitsCPU(flavor string, cores int64) map[quota.FlavorResource]quota.Limits {
	return map[quota.FlavorResource]quota.Limits{cpuIn(flavor): {Nominal: cores * 1000}}
}

func newCohortNode(name string) *quota.Node { return quota.NewNode(name, false, nil) }

func attach(parent, child *quota.Node) { quota.Attach(parent, child) }
