package apply

import (
	"github.com/sluicehq/sluice/internal/queue"
	"github.com/sluicehq/sluice/internal/workload"
)

// PendingInClusterQueue is the waiting workloads of a ClusterQueue in the
// order the scheduler serves them, from the queues it takes them from;
// false when the ClusterQueue is not known.
func (t *Tracker) PendingInClusterQueue(name string) ([]queue.Position, bool) {
	if _, ok := t.Cache.ClusterQueue(name); !ok {
		return nil, false
	}
	return queue.Positions(t.waitingIn(name)), true
}

// PendingInLocalQueue is the waiting workloads of a LocalQueue
// (namespace/name) in the order its ClusterQueue serves them, positions
// in the ClusterQueue included; false when the LocalQueue is not known.
func (t *Tracker) PendingInLocalQueue(key string) ([]queue.Position, bool) {
	lq, ok := t.Cache.LocalQueue(key)
	if !ok {
		return nil, false
	}
	all := queue.Positions(t.waitingIn(string(lq.Spec.ClusterQueue)))
	out := make([]queue.Position, 0, len(all))
	for _, p := range all {
		if p.Info.Namespace+"/"+p.Info.LocalQueue == key {
			out = append(out, p)
		}
	}
	return out, true
}

// waitingIn is the waiting workloads routed to clusterQueue through their
// LocalQueue.
func (t *Tracker) waitingIn(clusterQueue string) []*workload.Info {
	lqToCQ := t.Cache.LocalQueueKeys()
	var out []*workload.Info
	for _, info := range t.Queues.All() {
		if lqToCQ[info.Namespace+"/"+info.LocalQueue] == clusterQueue {
			out = append(out, info)
		}
	}
	return out
}
