package scheduler

import (
	"reflect"
	"testing"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/quota"
	"github.com/sluicehq/sluice/internal/workload"
)

// chargeAdmitted lists the admitted and evicting workloads in the snapshot
// and charges them to their queues.
func chargeAdmitted(snap *Snapshot, admitted []*Candidate, evicting map[string]quota.Amounts) {
	snap.Admitted, snap.Evicting = map[string][]*Candidate{}, evicting
	for _, a := range admitted {
		snap.Admitted[a.ClusterQueue] = append(snap.Admitted[a.ClusterQueue], a)
		snap.ClusterQueues[a.ClusterQueue].Node.ChargeAll(a.Usage, 1)
	}
	for name, amounts := range evicting {
		snap.ClusterQueues[name].Node.ChargeAll(amounts, 1)
	}
}

func victimKeys(d Decision) []string { return keys(d.Victims) }

func TestPreemptionWithinClusterQueue(t *testing.T) {
	cases := []struct {
		name       string
		policy     kueue.PreemptionPolicy
		admitted   []*Candidate
		evicting   int64
		pending    []*workload.Info
		wantReason []string
		wantVictim [][]string
	}{
		{
			name:       "lower priority is evicted, the newest first",
			policy:     kueue.PreemptionPolicyLowerPriority,
			admitted:   []*Candidate{cand("ns/old", "q", 1, 0, 2), cand("ns/new", "q", 1, 10, 2)},
			pending:    []*workload.Info{wl("urgent", "q", 10, 20, 2, "1")},
			wantReason: []string{kueue.ReasonWaitingForPreemptedWorkloads},
			wantVictim: [][]string{{"ns/new"}},
		},
		{
			name:       "never preempts with Never",
			policy:     kueue.PreemptionPolicyNever,
			admitted:   []*Candidate{cand("ns/low", "q", 1, 0, 4)},
			pending:    []*workload.Info{wl("urgent", "q", 10, 20, 2, "1")},
			wantReason: []string{kueue.ReasonWaitingForQuota},
			wantVictim: [][]string{nil},
		},
		{
			name:       "equal priority is safe under LowerPriority",
			policy:     kueue.PreemptionPolicyLowerPriority,
			admitted:   []*Candidate{cand("ns/peer", "q", 10, 0, 4)},
			pending:    []*workload.Info{wl("same", "q", 10, 20, 2, "1")},
			wantReason: []string{kueue.ReasonWaitingForQuota},
			wantVictim: [][]string{nil},
		},
		{
			name:       "newer equal priority under LowerOrNewerEqualPriority",
			policy:     kueue.PreemptionPolicyLowerOrNewerEqualPriority,
			admitted:   []*Candidate{cand("ns/newer", "q", 10, 30, 4)},
			pending:    []*workload.Info{wl("older", "q", 10, 5, 2, "1")},
			wantReason: []string{kueue.ReasonWaitingForPreemptedWorkloads},
			wantVictim: [][]string{{"ns/newer"}},
		},
		{
			name:       "quota already on its way back: wait, no new victim",
			policy:     kueue.PreemptionPolicyLowerPriority,
			admitted:   []*Candidate{cand("ns/low", "q", 1, 0, 2)},
			evicting:   2,
			pending:    []*workload.Info{wl("urgent", "q", 10, 20, 2, "1")},
			wantReason: []string{kueue.ReasonWaitingForPreemptedWorkloads},
			wantVictim: [][]string{nil},
		},
		{
			name:     "two preemptors never share a victim",
			policy:   kueue.PreemptionPolicyLowerPriority,
			admitted: []*Candidate{cand("ns/a", "q", 1, 0, 2), cand("ns/b", "q", 1, 10, 2)},
			pending: []*workload.Info{wl("first", "q", 10, 20, 2, "1"),
				wl("second", "q", 9, 21, 2, "1")},
			// The queue waits after its first preemptor: the second is not
			// looked at this cycle, so b is not taken twice.
			wantReason: []string{kueue.ReasonWaitingForPreemptedWorkloads},
			wantVictim: [][]string{{"ns/b"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(flavor("f"))
			cq := w.queue("q", kueue.BestEffortFIFO, kueue.MayStopSearch, false, flavorQuota{name: "f", nominal: 4})
			cq.WithinClusterQueue = tc.policy
			var evicting map[string]quota.Amounts
			if tc.evicting > 0 {
				evicting = map[string]quota.Amounts{"q": {cpuIn("f"): tc.evicting * 1000}}
			}
			chargeAdmitted(w.finalize(), tc.admitted, evicting)
			snap := w.snap
			ds := Schedule(snap, tc.pending)
			var reasons []string
			var victims [][]string
			for _, d := range ds {
				reasons = append(reasons, d.Reason)
				victims = append(victims, victimKeys(d))
			}
			if !reflect.DeepEqual(reasons, tc.wantReason) || !reflect.DeepEqual(victims, tc.wantVictim) {
				t.Errorf("reasons %v victims %v, want %v %v", reasons, victims, tc.wantReason, tc.wantVictim)
			}
		})
	}
}

func TestReclaimWithinCohort(t *testing.T) {
	cases := []struct {
		name       string
		policy     kueue.PreemptionPolicy
		admitted   []*Candidate
		pending    *workload.Info
		wantVictim []string
	}{
		{
			name:   "a lender takes back what a borrower uses",
			policy: kueue.PreemptionPolicyAny,
			// The borrower uses 6 of its 2: 4 borrowed from the lender.
			admitted:   []*Candidate{cand("ns/b1", "borrower", 5, 0, 3), cand("ns/b2", "borrower", 5, 10, 3)},
			pending:    wl("mine", "lender", 1, 20, 2, "1"),
			wantVictim: []string{"ns/b2"},
		},
		{
			name:       "LowerPriority spares higher-priority borrowers",
			policy:     kueue.PreemptionPolicyLowerPriority,
			admitted:   []*Candidate{cand("ns/b1", "borrower", 5, 0, 3), cand("ns/b2", "borrower", 5, 10, 3)},
			pending:    wl("mine", "lender", 1, 20, 2, "1"),
			wantVictim: nil,
		},
		{
			name:       "never from a queue that doesn't borrow",
			policy:     kueue.PreemptionPolicyAny,
			admitted:   []*Candidate{cand("ns/b1", "borrower", 5, 0, 2), cand("ns/l1", "lender", 5, 0, 4)},
			pending:    wl("mine", "lender", 1, 20, 2, "1"),
			wantVictim: nil,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(flavor("f"))
			lender := w.queue("lender", kueue.BestEffortFIFO, kueue.MayStopSearch, true, flavorQuota{name: "f", nominal: 4})
			lender.ReclaimWithinCohort = tc.policy
			w.queue("borrower", kueue.BestEffortFIFO, kueue.MayStopSearch, true, flavorQuota{name: "f", nominal: 2})
			chargeAdmitted(w.finalize(), tc.admitted, nil)
			ds := Schedule(w.snap, []*workload.Info{tc.pending})
			if len(ds) != 1 {
				t.Fatalf("%d decisions", len(ds))
			}
			if got := victimKeys(ds[0]); !reflect.DeepEqual(got, tc.wantVictim) {
				t.Errorf("victims %v (%s: %s), want %v", got, ds[0].Reason, ds[0].Message, tc.wantVictim)
			}
			for _, v := range tc.wantVictim {
				if got := ds[0].PreemptionReasons[v]; got != kueue.InCohortReclamationReason {
					t.Errorf("reason for %s: %q, want %s", v, got, kueue.InCohortReclamationReason)
				}
			}
		})
	}
}

func TestBorrowWithinCohort(t *testing.T) {
	threshold := func(v int32) *int32 { return &v }
	cases := []struct {
		name       string
		borrow     *kueue.BorrowWithinCohort
		reclaim    kueue.PreemptionPolicy
		wantVictim []string
		wantReason string
	}{
		{"reclaim alone can't make room for a borrowing preemptor", nil, kueue.PreemptionPolicyAny, nil, ""},
		{"borrowWithinCohort evicts a lower-priority borrower", &kueue.BorrowWithinCohort{Policy: kueue.BorrowWithinCohortPolicyLowerPriority},
			kueue.PreemptionPolicyLowerPriority, []string{"ns/b1"}, kueue.InCohortReclaimWhileBorrowingReason},
		{"not above the threshold", &kueue.BorrowWithinCohort{Policy: kueue.BorrowWithinCohortPolicyLowerPriority, MaxPriorityThreshold: threshold(0)},
			kueue.PreemptionPolicyLowerPriority, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(flavor("f"))
			preemptor := w.queue("preemptor", kueue.BestEffortFIFO, kueue.MayStopSearch, true, flavorQuota{name: "f", nominal: 2})
			preemptor.BorrowWithinCohort = tc.borrow
			preemptor.ReclaimWithinCohort = tc.reclaim
			w.queue("borrower", kueue.BestEffortFIFO, kueue.MayStopSearch, true, flavorQuota{name: "f", nominal: 2})
			// The borrower uses all 4 CPU of the cohort: 2 of them borrowed.
			chargeAdmitted(w.finalize(), []*Candidate{cand("ns/b1", "borrower", 1, 0, 3), cand("ns/b2", "borrower", 1, 10, 1)}, nil)
			ds := Schedule(w.snap, []*workload.Info{wl("big", "preemptor", 10, 20, 3, "1")})
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

// A preemptor holds what is free of what it needs for the rest of the
// cycle: a lower-priority borrower after it does not take that quota, so
// quota freed while its preemption waits to be confirmed gathers for it.
func TestPreemptorHoldsTheFreeQuotaItNeeds(t *testing.T) {
	w := newWorld(flavor("f"))
	lender := w.queue("lender", kueue.BestEffortFIFO, kueue.MayStopSearch, true, flavorQuota{name: "f", nominal: 4})
	lender.WithinClusterQueue = kueue.PreemptionPolicyLowerPriority
	w.queue("borrower", kueue.BestEffortFIFO, kueue.MayStopSearch, true, flavorQuota{name: "f", nominal: 2})
	chargeAdmitted(w.finalize(), []*Candidate{cand("ns/low", "lender", 1, 0, 2), cand("ns/own", "borrower", 1, 0, 2)}, nil)
	// 2 of the cohort's 6 are free; mine needs 4: evicting low frees 2 more.
	ds := Schedule(w.snap, []*workload.Info{wl("mine", "lender", 10, 20, 4, "1"), wl("small", "borrower", 1, 30, 1, "1")})
	byKey := map[string]Decision{}
	for _, d := range ds {
		byKey[d.Info.Key] = d
	}
	if got := victimKeys(byKey["ns/mine"]); !reflect.DeepEqual(got, []string{"ns/low"}) {
		t.Fatalf("mine's victims %v, want [ns/low]", got)
	}
	if d := byKey["ns/small"]; d.Admitted() {
		t.Fatal("a lower-priority borrower took the free quota the preemptor waits for")
	}
}
