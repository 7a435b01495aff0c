package scheduler

import (
	"slices"

	"github.com/sluicehq/sluice/internal/quota"
	"github.com/sluicehq/sluice/internal/workload"
)

// selectFairVictims picks victims under fair sharing: over and over, the
// queue with the highest share among those with candidates gives its next
// one (lowest priority, most recently admitted). A candidate of the
// preemptor's own queue is taken by its priority policy alone; one of
// another queue only while that queue borrows and a strategy allows it,
// and a queue that fails the strategies gives nothing more. It stops once
// the preemptor fits, then puts back what isn't needed. gone is quota
// already on its way back.
func (c *cycle) selectFairVictims(cq *ClusterQueue, info *workload.Info, gone, ordered []*Candidate) []*Candidate {
	usage := c.usageWithout(cq, info, slices.Concat(gone, ordered))
	if usage == nil {
		return nil
	}
	byQueue := map[string][]*Candidate{}
	for _, cand := range ordered {
		byQueue[cand.ClusterQueue] = append(byQueue[cand.ClusterQueue], cand)
	}
	var chosen []*Candidate
	goneWith := func(chosen []*Candidate) []*Candidate { return slices.Concat(gone, chosen) }
	for !c.fitsWithout(cq, info, goneWith(chosen), false) {
		target := c.highestShare(cq, byQueue, goneWith(chosen))
		if target == "" {
			return nil
		}
		v := byQueue[target][0]
		byQueue[target] = byQueue[target][1:]
		if target == cq.Name || c.fairAllows(cq, usage, v, goneWith(chosen)) {
			chosen = append(chosen, v)
			continue
		}
		delete(byQueue, target)
	}
	return putBackUnneeded(chosen, func(chosen []*Candidate) bool { return c.fitsWithout(cq, info, goneWith(chosen), false) })
}

// usageWithout is what info would charge to cq once gone is given back, or
// nil when it wouldn't fit even then.
func (c *cycle) usageWithout(cq *ClusterQueue, info *workload.Info, gone []*Candidate) quota.Amounts {
	defer c.release(gone)()
	a, f := assign(cq, c.snap.Flavors, info, false)
	if f != nil {
		return nil
	}
	return a.usage
}

// release gives the quota of gone back to their queues until the returned
// function charges it again.
func (c *cycle) release(gone []*Candidate) func() {
	for _, g := range gone {
		c.snap.ClusterQueues[g.ClusterQueue].Node.ChargeAll(g.Usage, -1)
	}
	return func() {
		for _, g := range gone {
			c.snap.ClusterQueues[g.ClusterQueue].Node.ChargeAll(g.Usage, 1)
		}
	}
}

// highestShare names the queue with candidates left whose share is the
// highest once gone is given back: compared where its branch meets the
// preemptor's (the children of their lowest common cohort), then by its
// own share, then by name.
func (c *cycle) highestShare(cq *ClusterQueue, byQueue map[string][]*Candidate, gone []*Candidate) string {
	defer c.release(gone)()
	best := ""
	var bestBranch, bestOwn int64
	for name, cands := range byQueue {
		if len(cands) == 0 {
			continue
		}
		node := c.snap.ClusterQueues[name].Node
		own := node.WeightedShare()
		branch := own
		if name != cq.Name {
			_, side := branchesUnderCommonCohort(cq.Node, node)
			branch = side.WeightedShare()
		}
		if best == "" || branch > bestBranch || (branch == bestBranch && (own > bestOwn || (own == bestOwn && name < best))) {
			best, bestBranch, bestOwn = name, branch, own
		}
	}
	return best
}

// fairAllows tells whether the strategies let cq's workload, charging
// usage, evict v once gone is given back: v's queue must still borrow, and
// the preemptor's branch share after admission must stay at most the
// victim branch's share after the eviction (LessThanOrEqualToFinalShare)
// or below it before (LessThanInitialShare).
func (c *cycle) fairAllows(cq *ClusterQueue, usage quota.Amounts, v *Candidate, gone []*Candidate) bool {
	defer c.release(gone)()
	target := c.snap.ClusterQueues[v.ClusterQueue].Node
	if !borrowing(target, v.Usage) {
		return false
	}
	mine, theirs := branchesUnderCommonCohort(cq.Node, target)
	cq.Node.ChargeAll(usage, 1)
	preemptorAfter := mine.WeightedShare()
	cq.Node.ChargeAll(usage, -1)
	victimBefore := theirs.WeightedShare()
	target.ChargeAll(v.Usage, -1)
	victimAfter := theirs.WeightedShare()
	target.ChargeAll(v.Usage, 1)
	for _, s := range c.snap.FairSharing.Strategies {
		switch {
		case s == LessThanOrEqualToFinalShare && preemptorAfter <= victimAfter:
			return true
		case s == LessThanInitialShare && preemptorAfter < victimBefore:
			return true
		}
	}
	return false
}

// branchesUnderCommonCohort returns the ancestors of a and b (or themselves)
// that are children of their lowest common cohort: where their shares
// compete. Both must be in one tree and distinct.
func branchesUnderCommonCohort(a, b *quota.Node) (*quota.Node, *quota.Node) {
	below := map[*quota.Node]*quota.Node{}
	for prev, n := a, a.Parent; n != nil; prev, n = n, n.Parent {
		below[n] = prev
	}
	for prev, n := b, b.Parent; n != nil; prev, n = n, n.Parent {
		if mine, ok := below[n]; ok {
			return mine, prev
		}
	}
	return a, b
}
