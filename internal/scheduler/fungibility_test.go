package scheduler

import (
	"reflect"
	"testing"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/quota"
	"github.com/sluicehq/sluice/internal/workload"
)

// A queue's first flavor is full of low-priority work and its second has
// room (its own, or borrowed): flavorFungibility chooses between preempting
// in the first and moving on to the second.
func TestFlavorFungibilityBetweenPreemptionAndTheNextFlavor(t *testing.T) {
	cases := []struct {
		name           string
		whenCanBorrow  kueue.FlavorFungibilityPolicy
		whenCanPreempt kueue.FlavorFungibilityPolicy
		preferPreempt  bool
		spotIsBorrowed bool
		wantFlavor     string // admitted there, or
		wantVictims    []string
	}{
		{name: "TryNextFlavor takes the next flavor's room", whenCanBorrow: kueue.MayStopSearch, whenCanPreempt: kueue.TryNextFlavor, wantFlavor: "spot"},
		{name: "MayStopSearch preempts in the first flavor", whenCanBorrow: kueue.MayStopSearch, whenCanPreempt: kueue.MayStopSearch, wantVictims: []string{"ns/low"}},
		{name: "BorrowingOverPreemption borrows in the next flavor", whenCanBorrow: kueue.TryNextFlavor, whenCanPreempt: kueue.TryNextFlavor,
			spotIsBorrowed: true, wantFlavor: "spot"},
		{name: "PreemptionOverBorrowing preempts rather than borrow", whenCanBorrow: kueue.TryNextFlavor, whenCanPreempt: kueue.TryNextFlavor,
			preferPreempt: true, spotIsBorrowed: true, wantVictims: []string{"ns/low"}},
		{name: "PreemptionOverBorrowing still takes the next flavor's own room", whenCanBorrow: kueue.TryNextFlavor, whenCanPreempt: kueue.TryNextFlavor,
			preferPreempt: true, wantFlavor: "spot"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(flavor("on-demand"), flavor("spot"))
			spot := flavorQuota{name: "spot", nominal: 4}
			if tc.spotIsBorrowed {
				spot.nominal = 0
				w.queue("lender", kueue.BestEffortFIFO, kueue.MayStopSearch, true, flavorQuota{name: "on-demand"}, flavorQuota{name: "spot", nominal: 4})
			}
			q := w.queue("q", kueue.BestEffortFIFO, tc.whenCanBorrow, true, flavorQuota{name: "on-demand", nominal: 4}, spot)
			q.WithinClusterQueue = kueue.PreemptionPolicyLowerPriority
			q.WhenCanPreempt, q.PreferPreemption = tc.whenCanPreempt, tc.preferPreempt
			low := &Candidate{Key: "ns/low", ClusterQueue: "q", Priority: 0, AdmittedAt: epoch,
				Usage: quota.Amounts{cpuIn("on-demand"): 4000}}
			chargeAdmitted(w.finalize(), []*Candidate{low}, nil)
			ds := Schedule(w.snap, []*workload.Info{wl("urgent", "q", 10, 5, 2, "1")})
			d := ds[0]
			if got := victimKeys(d); !reflect.DeepEqual(got, tc.wantVictims) {
				t.Fatalf("victims %v (%s: %s), want %v", got, d.Reason, d.Message, tc.wantVictims)
			}
			if tc.wantFlavor != "" {
				if !d.Admitted() {
					t.Fatalf("not admitted: %s: %s", d.Reason, d.Message)
				}
				if got := string(d.Admission.PodSetAssignments[0].Flavors["cpu"]); got != tc.wantFlavor {
					t.Errorf("admitted in %s, want %s", got, tc.wantFlavor)
				}
			} else if d.Admitted() {
				t.Errorf("admitted in %v, want a preemption", d.Admission.PodSetAssignments[0].Flavors)
			}
		})
	}
}
