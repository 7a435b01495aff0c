package cache

// WeightedShares reports the fair-sharing share of every ClusterQueue and
// of every cohort above them, from the quota tree of a fresh snapshot. Both
// maps are nil when fair sharing is off: there is nothing to report.
func (c *Cache) WeightedShares() (clusterQueues, cohorts map[string]int64) {
	c.mu.RLock()
	off := c.fairSharing == nil
	c.mu.RUnlock()
	if off {
		return nil, nil
	}
	snap := c.snapshot(false)
	clusterQueues = make(map[string]int64, len(snap.ClusterQueues))
	cohorts = map[string]int64{}
	for name, cq := range snap.ClusterQueues {
		clusterQueues[name] = cq.Node.WeightedShare()
		for n := cq.Node.Parent; n != nil; n = n.Parent {
			if _, done := cohorts[n.Name]; done {
				break
			}
			cohorts[n.Name] = n.WeightedShare()
		}
	}
	return clusterQueues, cohorts
}
