package admission

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// withinClusterQueue: LowerPriority lets an urgent workload evict a
// lower-priority one of its own queue; the victim says who took its place
// and queues again.
func TestPreemptionWithinClusterQueue(t *testing.T) {
	ns := namespace(t, nil)
	rf := flavor(cluster.Unique("flavor"), nil)
	cq := clusterQueue(cluster.Unique("cq"), "", fq{flavor: rf.Name, nominal: "2"})
	cq.Spec.Preemption = &kueue.ClusterQueuePreemption{WithinClusterQueue: kueue.PreemptionPolicyLowerPriority}
	cluster.MustCreate(t, rf, cq, localQueue(ns, "lq", cq.Name))
	waitActive(t, cq)

	low := newWorkload(ns, "low", "lq", 1, 2, "1")
	cluster.MustCreate(t, low)
	waitAdmitted(t, low)
	peer := newWorkload(ns, "peer", "lq", 1, 1, "1")
	cluster.MustCreate(t, peer)
	waitPending(t, peer, kueue.ReasonWaitingForQuota) // equal priority: no preemption

	urgent := newWorkload(ns, "urgent", "lq", 100, 2, "1")
	cluster.MustCreate(t, urgent)
	waitAdmitted(t, urgent)
	preempted := cluster.WaitPreempted(t, low, kueue.InClusterQueueReason)
	if !strings.Contains(preempted.Message, ns+"/urgent") {
		t.Errorf("Preempted message %q doesn't name the preemptor", preempted.Message)
	}
	// Its reservation was given up in the write that queued it again.
	if conditions := get(t, low).Status.Conditions; !meta.IsStatusConditionTrue(conditions, kueue.WorkloadRequeued) {
		t.Errorf("preempted but not requeued: %v", conditions)
	}
	if got := admittedNow(t, low, peer, urgent); len(got) != 1 || got[0] != "urgent" {
		t.Errorf("admitted now %v, want only urgent", got)
	}
}

// reclaimWithinCohort: a queue that lent its quota takes it back from a
// borrowing queue of its cohort.
func TestReclaimWithinCohort(t *testing.T) {
	ns := namespace(t, nil)
	rf := flavor(cluster.Unique("flavor"), nil)
	cohort := cluster.Unique("cohort")
	lender := clusterQueue(cluster.Unique("lender"), cohort, fq{flavor: rf.Name, nominal: "4"})
	lender.Spec.Preemption = &kueue.ClusterQueuePreemption{ReclaimWithinCohort: kueue.PreemptionPolicyAny}
	borrower := clusterQueue(cluster.Unique("borrower"), cohort, fq{flavor: rf.Name, nominal: "0"})
	cluster.MustCreate(t, rf, lender, borrower, localQueue(ns, "mine", lender.Name), localQueue(ns, "theirs", borrower.Name))
	waitActive(t, lender)
	waitActive(t, borrower)

	b1 := newWorkload(ns, "b1", "theirs", 100, 2, "1")
	cluster.MustCreate(t, b1)
	waitAdmitted(t, b1)
	// b2 must be the more recently admitted (the victim tried first), not
	// a tie at the second broken by name.
	nextAdmissionSecond(t, b1)
	b2 := newWorkload(ns, "b2", "theirs", 100, 2, "1")
	cluster.MustCreate(t, b2)
	waitAdmitted(t, b2) // the borrower holds all 4 CPU of the lender

	mine := newWorkload(ns, "mine", "mine", 0, 2, "1")
	cluster.MustCreate(t, mine)
	waitAdmitted(t, mine)
	cluster.WaitPreempted(t, b2, kueue.InCohortReclamationReason)
	if got := admittedNow(t, b1, b2, mine); len(got) != 2 || got[0] != "b1" || got[1] != "mine" {
		t.Errorf("admitted now %v, want b1 and mine", got)
	}
}

// borrowWithinCohort: a workload that will borrow may still evict
// lower-priority borrowers at or below the threshold.
func TestBorrowWithinCohort(t *testing.T) {
	ns := namespace(t, nil)
	rf := flavor(cluster.Unique("flavor"), nil)
	cohort := cluster.Unique("cohort")
	threshold := int32(5)
	preemptor := clusterQueue(cluster.Unique("preemptor"), cohort, fq{flavor: rf.Name, nominal: "2"})
	preemptor.Spec.Preemption = &kueue.ClusterQueuePreemption{ReclaimWithinCohort: kueue.PreemptionPolicyLowerPriority, BorrowWithinCohort: &kueue.BorrowWithinCohort{
		Policy: kueue.BorrowWithinCohortPolicyLowerPriority, MaxPriorityThreshold: &threshold}}
	other := clusterQueue(cluster.Unique("other"), cohort, fq{flavor: rf.Name, nominal: "2"})
	cluster.MustCreate(t, rf, preemptor, other, localQueue(ns, "mine", preemptor.Name), localQueue(ns, "theirs", other.Name))
	waitActive(t, preemptor)
	waitActive(t, other)

	low := newWorkload(ns, "low", "theirs", 1, 3, "1") // borrows 1 of the preemptor's 2
	cluster.MustCreate(t, low)
	waitAdmitted(t, low)
	big := newWorkload(ns, "big", "mine", 100, 3, "1") // will borrow 1
	cluster.MustCreate(t, big)
	waitAdmitted(t, big)
	cluster.WaitPreempted(t, low, kueue.InCohortReclaimWhileBorrowingReason)
}

// withinClusterQueue LowerOrNewerEqualPriority: a workload may also evict
// one of equal priority that queued after it (here: one that was admitted
// while it was held by a stopped LocalQueue).
func TestPreemptionOfNewerEqualPriority(t *testing.T) {
	ns := namespace(t, nil)
	rf := flavor(cluster.Unique("flavor"), nil)
	cq := clusterQueue(cluster.Unique("cq"), "", fq{flavor: rf.Name, nominal: "2"})
	cq.Spec.Preemption = &kueue.ClusterQueuePreemption{WithinClusterQueue: kueue.PreemptionPolicyLowerOrNewerEqualPriority}
	held := localQueue(ns, "held", cq.Name)
	held.Spec.StopPolicy = ptr.To(kueue.StopPolicyHold)
	cluster.MustCreate(t, rf, cq, held, localQueue(ns, "open", cq.Name))
	waitActive(t, cq)

	older := newWorkload(ns, "older", "held", 5, 2, "1")
	cluster.MustCreate(t, older)
	waitPending(t, older, kueue.ReasonPending, "stopped")
	nextSecond(t, older)
	newer := newWorkload(ns, "newer", "open", 5, 2, "1")
	cluster.MustCreate(t, newer)
	waitAdmitted(t, newer)

	update(t, held, func() { held.Spec.StopPolicy = ptr.To(kueue.StopPolicyNone) })
	waitAdmitted(t, older)
	cluster.WaitPreempted(t, newer, kueue.InClusterQueueReason)
}

// reclaimWithinCohort LowerPriority: the lender takes back only from
// lower-priority borrowers.
func TestReclaimOnlyFromLowerPriority(t *testing.T) {
	ns := namespace(t, nil)
	rf := flavor(cluster.Unique("flavor"), nil)
	cohort := cluster.Unique("cohort")
	lender := clusterQueue(cluster.Unique("lender"), cohort, fq{flavor: rf.Name, nominal: "4"})
	lender.Spec.Preemption = &kueue.ClusterQueuePreemption{ReclaimWithinCohort: kueue.PreemptionPolicyLowerPriority}
	borrower := clusterQueue(cluster.Unique("borrower"), cohort, fq{flavor: rf.Name, nominal: "0"})
	cluster.MustCreate(t, rf, lender, borrower, localQueue(ns, "mine", lender.Name), localQueue(ns, "theirs", borrower.Name))
	waitActive(t, lender)
	waitActive(t, borrower)

	important := newWorkload(ns, "important", "theirs", 100, 2, "1")
	low := newWorkload(ns, "low", "theirs", 1, 2, "1")
	cluster.MustCreate(t, important, low)
	waitAdmitted(t, important, low)

	mine := newWorkload(ns, "mine", "mine", 10, 2, "1")
	cluster.MustCreate(t, mine)
	waitAdmitted(t, mine)
	cluster.WaitPreempted(t, low, kueue.InCohortReclamationReason)
	second := newWorkload(ns, "second", "mine", 10, 2, "1")
	cluster.MustCreate(t, second)
	waitPending(t, second, kueue.ReasonWaitingForQuota)
	if got := admittedNow(t, important, low, mine, second); len(got) != 2 || got[0] != "important" || got[1] != "mine" {
		t.Errorf("admitted now %v, want important and mine", got)
	}
}

// flavorFungibility.whenCanPreempt: with TryNextFlavor (the default) an
// urgent workload that finds its first flavor full of lower-priority work
// goes to the next flavor; with MayStopSearch it preempts in the first.
func TestFungibilityChoosesBetweenPreemptionAndTheNextFlavor(t *testing.T) {
	for _, policy := range []kueue.FlavorFungibilityPolicy{kueue.TryNextFlavor, kueue.MayStopSearch} {
		t.Run(string(policy), func(t *testing.T) {
			ns := namespace(t, nil)
			onDemand, spot := flavor(cluster.Unique("on-demand"), nil), flavor(cluster.Unique("spot"), nil)
			cq := clusterQueue(cluster.Unique("cq"), "", fq{flavor: onDemand.Name, nominal: "2"}, fq{flavor: spot.Name, nominal: "2"})
			cq.Spec.Preemption = &kueue.ClusterQueuePreemption{WithinClusterQueue: kueue.PreemptionPolicyLowerPriority}
			cq.Spec.FlavorFungibility = &kueue.FlavorFungibility{WhenCanBorrow: kueue.MayStopSearch, WhenCanPreempt: policy}
			cluster.MustCreate(t, onDemand, spot, cq, localQueue(ns, "lq", cq.Name))
			waitActive(t, cq)

			low := newWorkload(ns, "low", "lq", 1, 2, "1")
			cluster.MustCreate(t, low)
			waitAdmitted(t, low)
			urgent := newWorkload(ns, "urgent", "lq", 100, 2, "1")
			cluster.MustCreate(t, urgent)
			waitAdmitted(t, urgent)
			got := string(urgent.Status.Admission.PodSetAssignments[0].Flavors["cpu"])
			if policy == kueue.TryNextFlavor {
				if got != spot.Name {
					t.Errorf("urgent admitted in %s, want %s", got, spot.Name)
				}
				if !reserved(get(t, low)) {
					t.Error("low lost its reservation though the next flavor had room")
				}
				return
			}
			if got != onDemand.Name {
				t.Errorf("urgent admitted in %s, want %s", got, onDemand.Name)
			}
			// low was preempted and, queued again, found room in spot.
			framework.Eventually(t, "low to be admitted again in spot", func(ctx context.Context) (bool, error) {
				current := &kueue.Workload{}
				if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(low), current); err != nil {
					return false, err
				}
				if !reserved(current) || current.Status.Admission.PodSetAssignments[0].Flavors["cpu"] != kueue.ResourceFlavorReference(spot.Name) {
					return false, fmt.Errorf("admission %v", current.Status.Admission)
				}
				return true, nil
			})
		})
	}
}
