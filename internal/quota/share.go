package quota

import (
	"math"

	corev1 "k8s.io/api/core/v1"
)

// DefaultWeight is a node's fair-sharing weight when none is set, in
// thousandths (weight 1).
const DefaultWeight = 1000

// InfiniteShare is the share of a node of weight 0 that borrows: it gets
// only what no node of positive weight wants.
const InfiniteShare = math.MaxInt64

// WeightedShare is the node's dominant share of what its cohort can lend,
// divided by its weight: for each resource, what the node uses above its
// subtree's quota (summed over flavors) per thousand of what its parent
// could ever make available of that resource (its Potential, which counts
// what the parent may borrow in turn: a cohort without quota of its own
// still lends its parent's); the largest over resources, times 1000 over
// the weight in thousandths. A root, or a node that borrows nothing, has
// share 0.
func (n *Node) WeightedShare() int64 {
	if n.Parent == nil {
		return 0
	}
	var borrowed map[corev1.ResourceName]int64
	for fr, used := range n.usage {
		if above := used - n.subtree[fr]; above > 0 {
			if borrowed == nil {
				borrowed = map[corev1.ResourceName]int64{}
			}
			borrowed[fr.Resource] = AddSat(borrowed[fr.Resource], above)
		}
	}
	if borrowed == nil {
		return 0
	}
	if n.Weight <= 0 {
		return InfiniteShare
	}
	lendable := map[corev1.ResourceName]int64{}
	for fr := range n.Parent.flavorResources() {
		if _, ok := borrowed[fr.Resource]; ok {
			lendable[fr.Resource] = AddSat(lendable[fr.Resource], n.Parent.Potential(fr))
		}
	}
	var dominant int64
	for name, b := range borrowed {
		// Borrowing with nothing lendable at this level means borrowing
		// from further up; that resource can't be compared here.
		if l := lendable[name]; l > 0 {
			dominant = max(dominant, MulDiv(b, 1000, l))
		}
	}
	return MulDiv(dominant, 1000, n.Weight)
}

// flavorResources are the cells where the node or an ancestor has quota.
func (n *Node) flavorResources() map[FlavorResource]bool {
	out := map[FlavorResource]bool{}
	for node := n; node != nil; node = node.Parent {
		for fr := range node.subtree {
			out[fr] = true
		}
	}
	return out
}
