package scheduler

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/quota"
	"github.com/sluicehq/sluice/internal/workload"
)

// Preempts tells whether a queue lets pending workloads evict admitted
// ones. Its quota node must be in its tree already.
func (cq *ClusterQueue) Preempts() bool {
	return enabledPolicy(cq.WithinClusterQueue) ||
		(cq.Node.Parent != nil && (enabledPolicy(cq.ReclaimWithinCohort) || cq.BorrowWithinCohort != nil))
}

// preemptibleWhileBorrowing tells whether borrowWithinCohort lets a
// preemptor of priority evict c even though the preemptor will borrow:
// only lower priority, at or below the threshold.
func preemptibleWhileBorrowing(b *kueue.BorrowWithinCohort, priority int32, c *Candidate) bool {
	if b == nil || c.Priority >= priority {
		return false
	}
	return b.MaxPriorityThreshold == nil || c.Priority <= *b.MaxPriorityThreshold
}

func enabledPolicy(p kueue.PreemptionPolicy) bool { return p != "" && p != kueue.PreemptionPolicyNever }

// preemptibleByReclaim tells whether reclaimWithinCohort lets a preemptor
// of priority evict c, a workload of another queue of its cohort tree.
func preemptibleByReclaim(policy kueue.PreemptionPolicy, priority int32, c *Candidate) bool {
	switch policy {
	case kueue.PreemptionPolicyAny:
		return true
	case kueue.PreemptionPolicyLowerPriority:
		return c.Priority < priority
	}
	return false
}

// preempt looks for room for a workload that doesn't fit by evicting
// admitted workloads: lower-priority ones of its own queue
// (withinClusterQueue), and ones of other queues of its cohort tree that
// borrow (reclaimWithinCohort), in which case the workload must then fit
// within its own queue's quota. It reports a decision when the workload
// should wait for evictions: ones already on their way that free enough, or
// new victims. A victim is never picked for two preemptors of one cycle.
func (c *cycle) preempt(cq *ClusterQueue, info *workload.Info) (Decision, bool) {
	root := treeRoot(cq.Node)
	var evicting []*Candidate
	for _, name := range slices.Sorted(maps.Keys(c.snap.Evicting)) {
		if other, ok := c.snap.ClusterQueues[name]; ok && treeRoot(other.Node) == root {
			evicting = append(evicting, &Candidate{ClusterQueue: name, Usage: c.snap.Evicting[name]})
		}
	}
	wait := Decision{Info: info, ClusterQueue: cq.Name, Reason: kueue.ReasonWaitingForPreemptedWorkloads}
	if len(evicting) > 0 && c.fitsWithout(cq, info, evicting, false) {
		wait.Message = "waiting for preempted workloads to stop and release their quota"
		c.hold(cq, info, evicting)
		return wait, true
	}
	var cands []*Candidate
	// whileBorrowing: victims of other queues that the preemptor may evict
	// even if it borrows (borrowWithinCohort); the others need it to fit
	// within its own quota (reclaimWithinCohort).
	whileBorrowing := map[string]bool{}
	for name, admitted := range c.snap.Admitted {
		other, ok := c.snap.ClusterQueues[name]
		if !ok {
			continue
		}
		for _, a := range admitted {
			if c.victims[a.Key] {
				continue
			}
			if name == cq.Name {
				if preemptibleInQueue(cq.WithinClusterQueue, info.Priority, info.QueueTime, a) {
					cands = append(cands, a)
				}
				continue
			}
			if cq.Node.Parent == nil || treeRoot(other.Node) != root || !borrowing(other.Node, a.Usage) {
				continue
			}
			borrowOK := preemptibleWhileBorrowing(cq.BorrowWithinCohort, info.Priority, a)
			if borrowOK || preemptibleByReclaim(cq.ReclaimWithinCohort, info.Priority, a) {
				cands = append(cands, a)
				whileBorrowing[a.Key] = borrowOK
			}
		}
	}
	orderCandidates(cands, cq.Name)
	fair := c.snap.FairSharing != nil
	var victims []*Candidate
	if fair {
		// Under fair sharing, shares decide between queues; borrowWithinCohort
		// does not apply.
		cands = slices.DeleteFunc(cands, func(a *Candidate) bool {
			return a.ClusterQueue != cq.Name && !preemptibleByReclaim(cq.ReclaimWithinCohort, info.Priority, a)
		})
		victims = c.selectFairVictims(cq, info, evicting, cands)
	} else {
		withinNominal := func(chosen []*Candidate) bool {
			for _, v := range chosen {
				if v.ClusterQueue != cq.Name && !whileBorrowing[v.Key] {
					return true
				}
			}
			return false
		}
		victims = selectVictims(cands, func(chosen []*Candidate) bool {
			return c.fitsWithout(cq, info, slices.Concat(evicting, chosen), withinNominal(chosen))
		})
	}
	if victims == nil {
		return Decision{}, false
	}
	borrows := !c.fitsWithout(cq, info, slices.Concat(evicting, victims), true)
	wait.PreemptionReasons = map[string]string{}
	for _, v := range victims {
		switch {
		case v.ClusterQueue == cq.Name:
			wait.PreemptionReasons[v.Key] = kueue.InClusterQueueReason
		case borrows && fair:
			wait.PreemptionReasons[v.Key] = kueue.InCohortFairSharingReason
		case borrows:
			wait.PreemptionReasons[v.Key] = kueue.InCohortReclaimWhileBorrowingReason
		default:
			wait.PreemptionReasons[v.Key] = kueue.InCohortReclamationReason
		}
	}
	names := make([]string, 0, len(victims))
	for _, v := range victims {
		c.victims[v.Key] = true
		names = append(names, v.Key)
	}
	wait.Victims = victims
	wait.Message = fmt.Sprintf("preempting %d workload(s) to make room in ClusterQueue %s: %s", len(victims), cq.Name, strings.Join(names, ", "))
	c.hold(cq, info, slices.Concat(evicting, victims))
	return wait, true
}

// hold charges to the rest of the cycle the part of what a preemptor needs
// that is free now, so that workloads after it in the cycle (of lower
// priority, or later) don't take the quota it waits for. Quota freed as
// admitted workloads finish then gathers for it, and by the time its
// preemption is confirmed (the apply layer waits a grace) it often fits
// without evicting anyone: a preemption that quota already on its way back
// would make needless costs the victim its run.
func (c *cycle) hold(cq *ClusterQueue, info *workload.Info, gone []*Candidate) {
	chargeBack := c.release(gone)
	a, f := assign(cq, c.snap.Flavors, info, true)
	chargeBack()
	if f != nil {
		return
	}
	held := quota.Amounts{}
	for fr, v := range a.usage {
		if free := cq.Node.Available(fr); free > 0 {
			held[fr] = min(v, free)
		}
	}
	cq.Node.ChargeAll(held, 1)
}

// fitsWithout tells whether info fits in cq once the quota of gone is given
// back to their queues; withinNominal also asks that it fit without
// borrowing.
func (c *cycle) fitsWithout(cq *ClusterQueue, info *workload.Info, gone []*Candidate, withinNominal bool) bool {
	chargeBack := c.release(gone)
	a, f := assign(cq, c.snap.Flavors, info, false)
	chargeBack()
	return f == nil && (!withinNominal || !a.borrows)
}

// borrowing tells whether a queue uses more than its nominal quota of any
// flavor and resource in usage.
func borrowing(node *quota.Node, usage quota.Amounts) bool {
	for fr := range usage {
		if node.Usage(fr) > node.Nominal(fr) {
			return true
		}
	}
	return false
}

func treeRoot(n *quota.Node) *quota.Node {
	for n.Parent != nil {
		n = n.Parent
	}
	return n
}
