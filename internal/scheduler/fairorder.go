package scheduler

import (
	"github.com/sluicehq/sluice/internal/queue"
	"github.com/sluicehq/sluice/internal/quota"
	"github.com/sluicehq/sluice/internal/workload"
)

// serveFair walks the queues' lists in fair-sharing order: within a cohort
// tree, at every cohort the child whose share would be lowest after
// admitting its next workload goes first (ties: the workloads' own order,
// priority then queue time, then the child's name). Separate trees share
// no quota and interleave in the workloads' order. Every step is decided
// on the usage left by the steps before, so admissions in one cycle see
// each other's shares.
func (c *cycle) serveFair(lists map[string][]*workload.Info, fn visit) {
	byNode := map[*quota.Node]*cursor{}
	for name, list := range lists {
		if len(list) > 0 {
			cq := c.snap.ClusterQueues[name]
			byNode[cq.Node] = &cursor{cq: cq, list: list}
		}
	}
	for len(byNode) > 0 {
		var next *cursor
		seen := map[*quota.Node]bool{}
		for node := range byNode {
			root := treeRoot(node)
			if seen[root] {
				continue
			}
			seen[root] = true
			if w := c.fairWinner(root, byNode); w != nil && (next == nil || cursorBefore(w, next)) {
				next = w
			}
		}
		info := next.list[next.next]
		next.next++
		goOn, skip := fn(next.cq, info, next.list[next.next:])
		next.next += skip
		if !goOn || next.next >= len(next.list) {
			delete(byNode, next.cq.Node)
		}
	}
}

// fairWinner is the cursor whose head goes next in node's subtree.
func (c *cycle) fairWinner(node *quota.Node, byNode map[*quota.Node]*cursor) *cursor {
	if node.IsClusterQueue {
		return byNode[node]
	}
	var best *cursor
	var bestShare int64
	for _, child := range node.Children {
		w := c.fairWinner(child, byNode)
		if w == nil {
			continue
		}
		share := c.shareAfter(child, w)
		if best == nil || share < bestShare || (share == bestShare && cursorBefore(w, best)) {
			best, bestShare = w, share
		}
	}
	return best
}

// shareAfter is node's share once the head of cur is admitted; a head that
// can't be placed now leaves the share as it is.
func (c *cycle) shareAfter(node *quota.Node, cur *cursor) int64 {
	a, f := assign(cur.cq, c.snap.Flavors, cur.list[cur.next], false)
	if f != nil {
		return node.WeightedShare()
	}
	cur.cq.Node.ChargeAll(a.usage, 1)
	defer cur.cq.Node.ChargeAll(a.usage, -1)
	return node.WeightedShare()
}

// cursorBefore orders two queues' heads: the workloads' order, then the
// queues' names.
func cursorBefore(a, b *cursor) bool {
	if x, y := a.list[a.next], b.list[b.next]; x != y {
		return queue.Less(x, y)
	}
	return a.cq.Name < b.cq.Name
}
