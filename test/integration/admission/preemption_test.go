package admission

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
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
	framework.Eventually(t, "the low-priority workload to be preempted and queued again", func(ctx context.Context) (bool, error) {
		current := &kueue.Workload{}
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(low), current); err != nil {
			return false, err
		}
		evicted := meta.FindStatusCondition(current.Status.Conditions, kueue.WorkloadEvicted)
		preempted := meta.FindStatusCondition(current.Status.Conditions, kueue.WorkloadPreempted)
		if evicted == nil || evicted.Reason != kueue.EvictedByPreemption || preempted == nil || preempted.Reason != kueue.InClusterQueueReason {
			return false, fmt.Errorf("Evicted %+v, Preempted %+v", evicted, preempted)
		}
		if !strings.Contains(preempted.Message, ns+"/urgent") {
			return false, fmt.Errorf("Preempted message %q doesn't name the preemptor", preempted.Message)
		}
		if current.Status.Admission != nil || !meta.IsStatusConditionTrue(current.Status.Conditions, kueue.WorkloadRequeued) {
			return false, fmt.Errorf("still reserved or not requeued: %v", current.Status.Conditions)
		}
		return true, nil
	})
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
	nextSecond(t, b1)
	b2 := newWorkload(ns, "b2", "theirs", 100, 2, "1")
	cluster.MustCreate(t, b2)
	waitAdmitted(t, b2) // the borrower holds all 4 CPU of the lender

	mine := newWorkload(ns, "mine", "mine", 0, 2, "1")
	cluster.MustCreate(t, mine)
	waitAdmitted(t, mine)
	framework.Eventually(t, "the newest borrowing workload to be reclaimed", func(ctx context.Context) (bool, error) {
		current := &kueue.Workload{}
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(b2), current); err != nil {
			return false, err
		}
		preempted := meta.FindStatusCondition(current.Status.Conditions, kueue.WorkloadPreempted)
		if preempted == nil || preempted.Reason != kueue.InCohortReclamationReason || current.Status.Admission != nil {
			return false, fmt.Errorf("Preempted %+v, admission %v", preempted, current.Status.Admission)
		}
		return true, nil
	})
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
	framework.Eventually(t, "the low-priority borrower to be preempted while the preemptor borrows", func(ctx context.Context) (bool, error) {
		current := &kueue.Workload{}
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(low), current); err != nil {
			return false, err
		}
		preempted := meta.FindStatusCondition(current.Status.Conditions, kueue.WorkloadPreempted)
		if preempted == nil || preempted.Reason != kueue.InCohortReclaimWhileBorrowingReason {
			return false, fmt.Errorf("Preempted %+v", preempted)
		}
		return true, nil
	})
}
