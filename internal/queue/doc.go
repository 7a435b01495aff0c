// Package queue owns the pending workloads: which ones wait, which are
// parked until something they depend on changes, and the order a
// ClusterQueue serves them in. It is pure (no API calls); its Queues type is
// safe for concurrent use by the reconcilers that feed it and the scheduler
// loop that drains it.
package queue
