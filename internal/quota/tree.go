package quota

import "math"

// Limits are the quota of one node of the tree in one flavor x resource.
type Limits struct {
	Nominal int64
	// BorrowingLimit caps what the node may take above its own quota from
	// its cohort; nil means unlimited.
	BorrowingLimit *int64
	// LendingLimit caps what of its quota the node lends to its cohort; nil
	// means all of it.
	LendingLimit *int64
}

// Node is a ClusterQueue (a leaf) or a Cohort of the quota tree.
type Node struct {
	Name           string
	IsClusterQueue bool
	Parent         *Node
	Children       []*Node
	Quotas         map[FlavorResource]Limits
	// Weight is the node's fair-sharing weight in thousandths; 0 means it
	// only gets what no node of positive weight wants.
	Weight int64

	// usage is, for a ClusterQueue, what its admitted workloads use; for a
	// cohort, what its children use of the pool it manages (their usage
	// beyond what each keeps for itself).
	usage Amounts
	// subtree is the quota of the node's subtree: its own nominal quota plus
	// what each child lends.
	subtree Amounts
}

// NewNode makes a node with the given quotas.
func NewNode(name string, isClusterQueue bool, quotas map[FlavorResource]Limits) *Node {
	if quotas == nil {
		quotas = map[FlavorResource]Limits{}
	}
	return &Node{Name: name, IsClusterQueue: isClusterQueue, Quotas: quotas, Weight: DefaultWeight, usage: Amounts{}, subtree: Amounts{}}
}

// Attach makes child a child of parent. Call Finalize on the roots once the
// tree is complete.
func Attach(parent, child *Node) {
	child.Parent = parent
	parent.Children = append(parent.Children, child)
}

// Finalize computes the subtree quotas below root. Usage charged before is
// kept.
func Finalize(root *Node) {
	root.subtree = Amounts{}
	for fr, l := range root.Quotas {
		root.subtree[fr] = AddSat(root.subtree[fr], l.Nominal)
	}
	for _, c := range root.Children {
		Finalize(c)
		for fr := range c.subtree {
			root.subtree[fr] = AddSat(root.subtree[fr], c.lendable(fr))
		}
	}
}

// guaranteed is the part of the subtree's quota the node keeps for itself.
func (n *Node) guaranteed(fr FlavorResource) int64 {
	l, ok := n.Quotas[fr]
	if !ok || l.LendingLimit == nil {
		return 0
	}
	return max(0, n.subtree[fr]-*l.LendingLimit)
}

// lendable is what the node's subtree puts into its parent's pool.
func (n *Node) lendable(fr FlavorResource) int64 {
	return n.subtree[fr] - n.guaranteed(fr)
}

// Usage is what the node uses in fr (for a cohort: of its pool).
func (n *Node) Usage(fr FlavorResource) int64 { return n.usage[fr] }

// SubtreeQuota is the quota of the node's subtree in fr.
func (n *Node) SubtreeQuota(fr FlavorResource) int64 { return n.subtree[fr] }

// Nominal is the node's own nominal quota in fr.
func (n *Node) Nominal(fr FlavorResource) int64 { return n.Quotas[fr].Nominal }

// Available is what the node can still use in fr: what it keeps for itself
// and has not used, plus what its ancestors can give it within its
// borrowing limit. It is 0, never negative, when usage already exceeds the
// bounds (after a quota was lowered).
//
// It never exceeds what the node's usage can still count (MaxInt64 less
// its usage): a cohort whose queues' quotas add up beyond int64 could
// otherwise hand one queue more than its usage can hold, and the charge
// would saturate instead of adding up, so that releasing it would not give
// the node back what it had.
func (n *Node) Available(fr FlavorResource) int64 {
	room := SubSat(math.MaxInt64, max(0, n.usage[fr]))
	if n.Parent == nil {
		return min(room, max(0, n.subtree[fr]-n.usage[fr]))
	}
	local := max(0, n.guaranteed(fr)-n.usage[fr])
	return min(room, AddSat(local, max(0, min(n.Parent.Available(fr), n.borrowingRoom(fr)))))
}

// borrowingRoom is how much more the node may draw from its parent: what it
// put in the pool, minus what it already draws from it, plus its borrowing
// limit.
func (n *Node) borrowingRoom(fr FlavorResource) int64 {
	l, ok := n.Quotas[fr]
	if !ok || l.BorrowingLimit == nil {
		return math.MaxInt64
	}
	g := n.guaranteed(fr)
	drawn := max(0, n.usage[fr]-g)
	return AddSat(n.subtree[fr]-g-drawn, *l.BorrowingLimit)
}

// Potential is what the node could use in fr if nothing else were in use:
// the bound beyond which a request can never fit.
func (n *Node) Potential(fr FlavorResource) int64 {
	if n.Parent == nil {
		return n.subtree[fr]
	}
	room := int64(math.MaxInt64)
	if l, ok := n.Quotas[fr]; ok && l.BorrowingLimit != nil {
		room = AddSat(n.subtree[fr]-n.guaranteed(fr), *l.BorrowingLimit)
	}
	return AddSat(n.guaranteed(fr), min(n.Parent.Potential(fr), room))
}

// Borrowed is what the node uses beyond its own subtree quota.
func (n *Node) Borrowed(fr FlavorResource) int64 {
	return max(0, n.usage[fr]-n.subtree[fr])
}

// Charge adds delta (negative to release) to the node's usage and carries
// the change of what it draws from each pool up the tree.
func (n *Node) Charge(fr FlavorResource, delta int64) {
	for node := n; node != nil && delta != 0; node = node.Parent {
		g := node.guaranteed(fr)
		before := max(0, node.usage[fr]-g)
		node.usage[fr] = AddSat(node.usage[fr], delta)
		after := max(0, node.usage[fr]-g)
		delta = after - before
	}
}

// ChargeAll charges every amount.
func (n *Node) ChargeAll(amounts Amounts, sign int64) {
	for fr, v := range amounts {
		n.Charge(fr, MulSat(sign, v))
	}
}
