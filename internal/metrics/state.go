// Package metrics exports Kueue's kueue_* Prometheus series under Kueue's
// names, labels and buckets, so that dashboards and alerts built on Kueue
// read sluice unchanged. The gauges (queue sizes, usage, quotas, shares)
// are computed at scrape time from a State the manager hands over; events
// (admissions, evictions, wait times) are counted where they happen, through
// the functions of events.go. It owns no admission state and writes
// nothing to the cluster.
package metrics

// Replica roles, the replica_role label of every series.
const (
	RoleLeader     = "leader"
	RoleFollower   = "follower"
	RoleStandalone = "standalone"
)

// ClusterQueue statuses, the status label of kueue_cluster_queue_status.
const (
	StatusPending     = "pending"
	StatusActive      = "active"
	StatusTerminating = "terminating"
)

// State is what the gauges report, read at scrape time.
type State struct {
	// Role is this replica's replica_role.
	Role          string
	ClusterQueues []ClusterQueue
	// LocalQueues are reported only when the configuration asks for
	// per-LocalQueue series (metrics.localQueueMetrics).
	LocalQueues []LocalQueue
	Cohorts     []Cohort
}

// ClusterQueue is one ClusterQueue's figures.
type ClusterQueue struct {
	Name, Cohort string
	// ParentCohort and RootCohort place it in the cohort tree ("" alone).
	ParentCohort, RootCohort string
	Status                   string
	// PendingActive are the waiting workloads the scheduler will try;
	// PendingInadmissible those parked until something changes.
	PendingActive, PendingInadmissible int
	Reserving, Admitted                int
	// Finished are its finished Workloads that remain.
	Finished int
	// WeightedShare is nil when fair sharing is off.
	WeightedShare *int64
	Resources     []Resource
	// PendingResources are the requests of its waiting workloads, per
	// resource it covers (reported with Resources).
	PendingResources map[string]float64
}

// Resource is one flavor and resource of a queue. A nil limit is none:
// reported as +Inf.
type Resource struct {
	Flavor, Resource             string
	Nominal                      float64
	BorrowingLimit, LendingLimit *float64
	Reserved, Used               float64
}

// LocalQueue is one LocalQueue's figures.
type LocalQueue struct {
	Namespace, Name, ClusterQueue      string
	PendingActive, PendingInadmissible int
	Reserving, Admitted, Finished      int
	// Active is the queue's Active condition: True, False or Unknown.
	Active    string
	Resources []Resource
}

// Cohort is one cohort's figures.
type Cohort struct {
	Name, ParentCohort, RootCohort string
	WeightedShare                  *int64
	// Quota is the Cohort's own nominal quota (Flavor, Resource, Nominal),
	// reported with the queues' resources (enableClusterQueueResources).
	Quota []Resource
}
