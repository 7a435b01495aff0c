// Package visibility serves visibility.kueue.x-k8s.io, Kueue's read-only
// API of pending workloads, as an aggregated API server inside the
// manager: the pending workloads of a ClusterQueue or LocalQueue, each
// with its positions, priority and sluice's reason for waiting. It reads
// the order from a Source (the queues the scheduler serves) and owns the
// server's wiring (serving, delegated authentication and authorization);
// it never writes to the cluster.
package visibility
