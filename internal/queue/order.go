package queue

import (
	"github.com/sluicehq/sluice/internal/workload"
)

// Less orders the workloads of a ClusterQueue: higher priority first, then
// earlier queue time, then name, so the order is total and deterministic.
func Less(a, b *workload.Info) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	if !a.QueueTime.Equal(b.QueueTime) {
		return a.QueueTime.Before(b.QueueTime)
	}
	return a.Key < b.Key
}
