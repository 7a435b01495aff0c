// Package scheduler makes the admission decisions of one cycle: from a
// snapshot of the quota tree, the queues and the flavors, and the pending
// workloads, it returns which workloads are admitted with which flavors and
// why the others wait, which admitted workloads to preempt for whom, and in
// which order borrowing queues are served under fair sharing. It is pure: no API calls, no clocks, no goroutines.
// The same inputs give the same decisions, so a cycle can be unit-tested,
// benchmarked in memory and replayed.
package scheduler
