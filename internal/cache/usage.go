package cache

import (
	"maps"
	"slices"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/quota"
)

// Usage is what the workloads of one queue hold.
type Usage struct {
	// Reserved is the quota held by workloads with a reservation, Admitted
	// the part held by admitted ones.
	Reserved, Admitted quota.Amounts
	// ReservingWorkloads and AdmittedWorkloads count them.
	ReservingWorkloads, AdmittedWorkloads int32
}

func (u *Usage) add(r *reservation) {
	u.ReservingWorkloads++
	u.Reserved.Add(r.usage)
	if r.admitted {
		u.AdmittedWorkloads++
		u.Admitted.Add(r.usage)
	}
}

func newUsage() *Usage { return &Usage{Reserved: quota.Amounts{}, Admitted: quota.Amounts{}} }

// Usages aggregates every reservation by ClusterQueue and by LocalQueue
// (namespace/name), in one pass.
func (c *Cache) Usages() (byClusterQueue, byLocalQueue map[string]*Usage) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	byClusterQueue = map[string]*Usage{}
	byLocalQueue = map[string]*Usage{}
	for _, r := range c.workloads {
		if byClusterQueue[r.clusterQueue] == nil {
			byClusterQueue[r.clusterQueue] = newUsage()
		}
		byClusterQueue[r.clusterQueue].add(r)
		if byLocalQueue[r.localQueue] == nil {
			byLocalQueue[r.localQueue] = newUsage()
		}
		byLocalQueue[r.localQueue].add(r)
	}
	return byClusterQueue, byLocalQueue
}

// ClusterQueueNames lists the cached ClusterQueues.
func (c *Cache) ClusterQueueNames() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return slices.Sorted(maps.Keys(c.clusterQueues))
}

// CohortNames lists the Cohort objects in the cache (implicit cohorts
// have no object to report on).
func (c *Cache) CohortNames() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return slices.Sorted(maps.Keys(c.cohorts))
}

// LocalQueueKeys lists the cached LocalQueues (namespace/name) with their
// ClusterQueue.
func (c *Cache) LocalQueueKeys() map[string]string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make(map[string]string, len(c.localQueues))
	for key, lq := range c.localQueues {
		out[key] = string(lq.Spec.ClusterQueue)
	}
	return out
}

// ClusterQueueState returns the cached ClusterQueue and whether it is
// active (can admit).
func (c *Cache) ClusterQueueState(name string) (cq *kueue.ClusterQueue, active, ok bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	q, ok := c.clusterQueues[name]
	if !ok {
		return nil, false, false
	}
	return q.obj, q.active, true
}

// CohortResourceGroups maps every Cohort object to its own quota.
func (c *Cache) CohortResourceGroups() map[string][]kueue.ResourceGroup {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make(map[string][]kueue.ResourceGroup, len(c.cohorts))
	for name, co := range c.cohorts {
		out[name] = co.Spec.ResourceGroups
	}
	return out
}

// CohortParents maps every Cohort object to its parent ("" for a root).
func (c *Cache) CohortParents() map[string]string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make(map[string]string, len(c.cohorts))
	for name, co := range c.cohorts {
		out[name] = string(co.Spec.ParentName)
	}
	return out
}
