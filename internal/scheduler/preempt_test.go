package scheduler

import (
	"reflect"
	"testing"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/quota"
	"github.com/sluicehq/sluice/internal/workload"
)

// preemptingQueue is a queue of cpu in flavor f with the given admitted
// workloads charged to it (and to its candidates list).
func preemptingQueue(w *world, policy kueue.PreemptionPolicy, nominal int64, admitted ...*Candidate) *ClusterQueue {
	cq := w.queue("q", kueue.BestEffortFIFO, kueue.MayStopSearch, false, flavorQuota{name: "f", nominal: nominal})
	cq.WithinClusterQueue = policy
	cq.Admitted = admitted
	return cq
}

func chargeAdmitted(cq *ClusterQueue) {
	for _, a := range cq.Admitted {
		cq.Node.ChargeAll(a.Usage, 1)
	}
	cq.Node.ChargeAll(cq.Evicting, 1)
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
			cq := preemptingQueue(w, tc.policy, 4, tc.admitted...)
			if tc.evicting > 0 {
				cq.Evicting = quota.Amounts{cpuIn("f"): tc.evicting * 1000}
			}
			snap := w.finalize()
			chargeAdmitted(cq)
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
