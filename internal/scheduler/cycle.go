package scheduler

import (
	"container/heap"
	"fmt"
	"sort"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/queue"
	"github.com/sluicehq/sluice/internal/quota"
	"github.com/sluicehq/sluice/internal/workload"
)

// Decision is the verdict on one workload.
type Decision struct {
	Info *workload.Info
	// ClusterQueue the workload was considered in ("" when it could not be
	// routed to one).
	ClusterQueue string
	// Admission is set when the workload is admitted.
	Admission *kueue.Admission
	// Usage is what the admission charges, per flavor and resource.
	Usage quota.Amounts
	// Reason and Message explain why a workload waits (QuotaReserved=False).
	Reason, Message string
	// Park sets the workload aside until something changes.
	Park bool
	// Victims are admitted workloads to evict so that this one fits; it
	// waits (keeping its place) until they have stopped.
	Victims []*Candidate
	// PreemptionReasons gives each victim's Preempted reason, by key.
	PreemptionReasons map[string]string
}

// Admitted tells whether the decision admits.
func (d *Decision) Admitted() bool { return d.Admission != nil }

// Schedule runs one cycle: it admits every pending workload that fits, in
// order, charging each admission to the snapshot before the next. Workloads
// that fit within their queue's own quota go first, across all queues, up to
// the first one of each queue that doesn't; borrowing admissions follow, so
// that a borrower never takes quota that a workload of higher priority could
// use within its own queue's quota in the same cycle. Within each phase,
// queues are served by one merged order (priority, queue time, name).
// StrictFIFO queues stop at their first workload that doesn't fit yet (one
// that can never fit is parked, not waited for); BestEffortFIFO queues park
// it and go on.
func Schedule(snap *Snapshot, pending []*workload.Info) []Decision {
	decisions := make([]Decision, 0, len(pending))
	perQueue := map[string][]*workload.Info{}
	for _, info := range pending {
		cq, why := route(snap, info)
		if why != "" {
			name := ""
			if cq != nil {
				name = cq.Name
			}
			decisions = append(decisions, Decision{Info: info, ClusterQueue: name, Reason: kueue.ReasonPending, Message: why, Park: true})
			continue
		}
		perQueue[cq.Name] = append(perQueue[cq.Name], info)
	}
	for _, list := range perQueue {
		sort.Slice(list, func(i, j int) bool { return queue.Less(list[i], list[j]) })
	}

	c := &cycle{snap: snap, failedShapes: map[string]map[string]*failure{}, victims: map[string]bool{}}
	// Phase 1: admissions within quota. A workload that needs to borrow (or
	// doesn't fit) waits for phase 2 with everything behind it in its queue,
	// so that a queue's own order is never broken.
	deferred := map[string][]*workload.Info{}
	c.serve(perQueue, func(cq *ClusterQueue, info *workload.Info, rest []*workload.Info) (bool, int) {
		a, f := assign(cq, snap.Flavors, info, false)
		if f == nil && !a.borrows && !cq.preemptsBefore(a) {
			decisions = append(decisions, c.admit(cq, info, a))
			return true, 0
		}
		deferred[cq.Name] = append(append(deferred[cq.Name], info), rest...)
		return false, 0
	})
	// Phase 2: everything left, borrowing allowed; by share under fair
	// sharing.
	serve := c.serve
	if snap.FairSharing != nil {
		serve = c.serveFair
	}
	serve(deferred, func(cq *ClusterQueue, info *workload.Info, rest []*workload.Info) (bool, int) {
		if f, seen := c.failedShapes[cq.Name][info.Shape]; seen {
			decisions = append(decisions, Decision{Info: info, ClusterQueue: cq.Name, Reason: f.reason, Message: f.message, Park: true})
			return true, c.parkFailedShapes(cq, rest, &decisions)
		}
		a, f := assign(cq, snap.Flavors, info, true)
		if f != nil && info.Partial() {
			if partial := assignPartial(cq, snap.Flavors, info); partial != nil {
				a, f = partial, nil
			}
		}
		if f == nil {
			if cq.preemptsBefore(a) {
				if d, ok := c.preempt(cq.withoutFlavors(a.passedOver), info); ok {
					decisions = append(decisions, d)
					return false, 0
				}
			}
			decisions = append(decisions, c.admit(cq, info, a))
			return true, 0
		}
		if f.reason == kueue.ReasonWaitingForQuota && cq.Preempts() {
			if d, ok := c.preempt(cq, info); ok {
				// It keeps its place: nothing behind it takes the room it
				// waits for.
				decisions = append(decisions, d)
				return false, 0
			}
		}
		if cq.Strategy == kueue.StrictFIFO && !neverFitsNow(f) {
			// The head blocks its queue; it is evaluated again next cycle.
			// One that can't fit whatever is released (beyond the most the
			// queue can get, or no flavor matches) is parked like in
			// BestEffortFIFO instead: it would block the queue forever. A
			// change of quota or flavors requeues it.
			decisions = append(decisions, Decision{Info: info, ClusterQueue: cq.Name, Reason: f.reason, Message: f.message})
			return false, 0
		}
		if c.failedShapes[cq.Name] == nil {
			c.failedShapes[cq.Name] = map[string]*failure{}
		}
		c.failedShapes[cq.Name][info.Shape] = f
		decisions = append(decisions, Decision{Info: info, ClusterQueue: cq.Name, Reason: f.reason, Message: f.message, Park: true})
		return true, c.parkFailedShapes(cq, rest, &decisions)
	})
	return decisions
}

// neverFitsNow tells a failure that no release of quota can cure: only a
// change of the queue, its cohort or its flavors can.
func neverFitsNow(f *failure) bool {
	return f.reason == kueue.ReasonExceedsMaxQuota || f.reason == kueue.ReasonNoMatchingFlavor
}

// parkFailedShapes parks the workloads at the front of rest whose shape
// already failed in cq this cycle, and returns how many. Quota only shrinks
// within a cycle, so they would fail at their turn in the merged order too;
// parking them now spares the merge.
func (c *cycle) parkFailedShapes(cq *ClusterQueue, rest []*workload.Info, decisions *[]Decision) int {
	failed := c.failedShapes[cq.Name]
	n := 0
	for _, info := range rest {
		f, seen := failed[info.Shape]
		if !seen {
			break
		}
		*decisions = append(*decisions, Decision{Info: info, ClusterQueue: cq.Name, Reason: f.reason, Message: f.message, Park: true})
		n++
	}
	return n
}

// route finds the ClusterQueue of a workload, or says why it has none.
func route(snap *Snapshot, info *workload.Info) (*ClusterQueue, string) {
	if info.LocalQueue == "" {
		return nil, "the workload names no LocalQueue (spec.queueName)"
	}
	lq, ok := snap.LocalQueues[info.Namespace+"/"+info.LocalQueue]
	if !ok {
		return nil, fmt.Sprintf("LocalQueue %s doesn't exist in namespace %s", info.LocalQueue, info.Namespace)
	}
	cq, ok := snap.ClusterQueues[lq.ClusterQueue]
	if !ok {
		return nil, fmt.Sprintf("ClusterQueue %s of LocalQueue %s doesn't exist", lq.ClusterQueue, info.LocalQueue)
	}
	if lq.Stopped {
		return cq, fmt.Sprintf("LocalQueue %s is stopped (stopPolicy)", info.LocalQueue)
	}
	if !cq.Active {
		return cq, fmt.Sprintf("ClusterQueue %s is inactive: %s", cq.Name, cq.InactiveMessage)
	}
	if cq.NamespaceSelector == nil || !cq.NamespaceSelector.Matches(snap.NamespaceLabels[info.Namespace]) {
		return cq, fmt.Sprintf("namespace %s is not selected by the namespaceSelector of ClusterQueue %s", info.Namespace, cq.Name)
	}
	return cq, ""
}

type cycle struct {
	snap *Snapshot
	// failedShapes: per queue, requirement shapes that didn't fit this cycle.
	failedShapes map[string]map[string]*failure
	// victims picked this cycle, by key: each is evicted for one preemptor.
	victims map[string]bool
}

func (c *cycle) admit(cq *ClusterQueue, info *workload.Info, a *assignment) Decision {
	cq.Node.ChargeAll(a.usage, 1)
	return Decision{Info: info, ClusterQueue: cq.Name, Admission: a.admission(cq.Name), Usage: a.usage}
}

// visit evaluates a queue's next workload; rest are the ones after it. It
// reports whether the queue may go on this phase, and how many of rest it
// decided as well.
type visit func(cq *ClusterQueue, info *workload.Info, rest []*workload.Info) (goOn bool, skip int)

// serve walks the queues' ordered lists as one merged order.
func (c *cycle) serve(lists map[string][]*workload.Info, fn visit) {
	h := &cursors{}
	for name, list := range lists {
		if len(list) > 0 {
			*h = append(*h, &cursor{cq: c.snap.ClusterQueues[name], list: list})
		}
	}
	heap.Init(h)
	for h.Len() > 0 {
		cur := (*h)[0]
		info := cur.list[cur.next]
		cur.next++
		goOn, skip := fn(cur.cq, info, cur.list[cur.next:])
		cur.next += skip
		if !goOn || cur.next >= len(cur.list) {
			heap.Pop(h)
			continue
		}
		heap.Fix(h, 0)
	}
}

type cursor struct {
	cq   *ClusterQueue
	list []*workload.Info
	next int
}

type cursors []*cursor

func (h cursors) Len() int { return len(h) }
func (h cursors) Less(i, j int) bool {
	a, b := h[i].list[h[i].next], h[j].list[h[j].next]
	if a == b {
		return h[i].cq.Name < h[j].cq.Name
	}
	return queue.Less(a, b)
}
func (h cursors) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *cursors) Push(x any)   { *h = append(*h, x.(*cursor)) }
func (h *cursors) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
