package metrics

import (
	"math"
	"runtime"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

// The scrape-time series: Kueue's names and label sets.
var (
	pendingWorkloads    = desc("kueue_pending_workloads", "Workloads waiting in the ClusterQueue; status active: the scheduler will try them, inadmissible: parked until something they need changes.", "cluster_queue", "status", "replica_role")
	reservingWorkloads  = desc("kueue_reserving_active_workloads", "Workloads holding quota in the ClusterQueue (reserved, admitted or not yet).", "cluster_queue", "replica_role")
	admittedWorkloads   = desc("kueue_admitted_active_workloads", "Admitted workloads of the ClusterQueue that have not finished.", "cluster_queue", "replica_role")
	finishedWorkloads   = desc("kueue_finished_workloads", "Finished Workloads of the ClusterQueue that still exist.", "cluster_queue", "replica_role")
	clusterQueueStatus  = desc("kueue_cluster_queue_status", "1 for the ClusterQueue's status (pending: inactive, active, terminating: being deleted), 0 for the others.", "cluster_queue", "status", "replica_role")
	clusterQueueInfo    = desc("kueue_cluster_queue_info", "1 per ClusterQueue, with its place in the cohort tree, for joins.", "cluster_queue", "parent_cohort", "root_cohort", "replica_role")
	resourceReserved    = desc("kueue_cluster_queue_resource_reservation", "Quota reserved in the ClusterQueue, per flavor and resource.", "cohort", "cluster_queue", "flavor", "resource", "replica_role")
	resourceUsed        = desc("kueue_cluster_queue_resource_usage", "Quota used by the ClusterQueue's admitted workloads, per flavor and resource.", "cohort", "cluster_queue", "flavor", "resource", "replica_role")
	resourcePending     = desc("kueue_cluster_queue_resource_pending", "Requests of the ClusterQueue's waiting workloads (not yet assigned to flavors), per resource.", "cluster_queue", "resource", "replica_role")
	nominalQuota        = desc("kueue_cluster_queue_nominal_quota", "The ClusterQueue's nominal quota, per flavor and resource.", "cohort", "cluster_queue", "flavor", "resource", "replica_role")
	borrowingLimit      = desc("kueue_cluster_queue_borrowing_limit", "The ClusterQueue's borrowing limit, per flavor and resource; +Inf when it has none.", "cohort", "cluster_queue", "flavor", "resource", "replica_role")
	lendingLimit        = desc("kueue_cluster_queue_lending_limit", "The ClusterQueue's lending limit, per flavor and resource; +Inf when it has none.", "cohort", "cluster_queue", "flavor", "resource", "replica_role")
	cqWeightedShare     = desc("kueue_cluster_queue_weighted_share", "The ClusterQueue's fair-sharing share (status.fairSharing.weightedShare); only with fair sharing on.", "cluster_queue", "cohort", "replica_role")
	cohortWeightedShare = desc("kueue_cohort_weighted_share", "The cohort's fair-sharing share; only with fair sharing on.", "cohort", "replica_role")
	cohortInfo          = desc("kueue_cohort_info", "1 per Cohort, with its place in the cohort tree, for joins.", "cohort", "parent_cohort", "root_cohort", "replica_role")
	subtreeAdmitted     = desc("kueue_cohort_subtree_admitted_active_workloads", "Admitted workloads that have not finished, in the ClusterQueues of the cohort's subtree.", "cohort", "replica_role")
	subtreeQuota        = desc("kueue_cohort_subtree_quota", "Nominal quota of the cohort's subtree (its own, its cohorts' and its ClusterQueues'), per flavor and resource.", "cohort", "flavor", "resource", "replica_role")
	subtreeReserved     = desc("kueue_cohort_subtree_resource_reservations", "Quota reserved in the ClusterQueues of the cohort's subtree, per flavor and resource.", "cohort", "flavor", "resource", "replica_role")

	lqPending     = desc("kueue_local_queue_pending_workloads", "Workloads waiting in the LocalQueue, by status as kueue_pending_workloads.", "name", "namespace", "status", "replica_role")
	lqReserving   = desc("kueue_local_queue_reserving_active_workloads", "Workloads of the LocalQueue holding quota.", "name", "namespace", "replica_role")
	lqAdmitted    = desc("kueue_local_queue_admitted_active_workloads", "Admitted workloads of the LocalQueue that have not finished.", "name", "namespace", "replica_role")
	lqFinishedNow = desc("kueue_local_queue_finished_workloads", "Finished Workloads of the LocalQueue that still exist.", "name", "namespace", "replica_role")
	lqStatus      = desc("kueue_local_queue_status", "1 for the LocalQueue's Active condition status (True, False, Unknown), 0 for the others.", "name", "namespace", "active", "replica_role")
	lqReserved    = desc("kueue_local_queue_resource_reservation", "Quota reserved by the LocalQueue's workloads, per flavor and resource.", "name", "namespace", "flavor", "resource", "replica_role")
	lqUsed        = desc("kueue_local_queue_resource_usage", "Quota used by the LocalQueue's admitted workloads, per flavor and resource.", "name", "namespace", "flavor", "resource", "replica_role")

	buildInfo = desc("kueue_build_info", "1, with the build of the running manager (sluice's version).", "git_version", "git_commit", "build_date", "go_version", "compiler", "platform")
)

// Build is what kueue_build_info reports.
type Build struct{ Version, Commit, Date string }

// Collector computes the gauges at every scrape from the State its source
// returns. One is registered with controller-runtime's registry; the
// manager sets its source.
type Collector struct {
	mu     sync.RWMutex
	source func() State
	build  Build
}

// Describe sends every series' description.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{pendingWorkloads, reservingWorkloads, admittedWorkloads, finishedWorkloads, lqFinishedNow, clusterQueueStatus, clusterQueueInfo,
		resourceReserved, resourceUsed, resourcePending, nominalQuota, borrowingLimit, lendingLimit, cqWeightedShare, cohortWeightedShare, cohortInfo,
		subtreeAdmitted, subtreeQuota, subtreeReserved,
		lqPending, lqReserving, lqAdmitted, lqStatus, lqReserved, lqUsed, buildInfo} {
		ch <- d
	}
}

// SetSource makes source the state of the following scrapes; nil reports
// only the build.
func (c *Collector) SetSource(source func() State, build Build) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.source, c.build = source, build
}

// Collect reports the current state.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.RLock()
	source, build := c.source, c.build
	c.mu.RUnlock()
	ch <- prometheus.MustNewConstMetric(buildInfo, prometheus.GaugeValue, 1,
		build.Version, build.Commit, build.Date, runtime.Version(), runtime.Compiler, runtime.GOOS+"/"+runtime.GOARCH)
	if source == nil {
		return
	}
	collectState(ch, source())
}

func collectState(ch chan<- prometheus.Metric, s State) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	role := s.Role
	for _, cq := range s.ClusterQueues {
		gauge(pendingWorkloads, float64(cq.PendingActive), cq.Name, "active", role)
		gauge(pendingWorkloads, float64(cq.PendingInadmissible), cq.Name, "inadmissible", role)
		gauge(reservingWorkloads, float64(cq.Reserving), cq.Name, role)
		gauge(admittedWorkloads, float64(cq.Admitted), cq.Name, role)
		gauge(finishedWorkloads, float64(cq.Finished), cq.Name, role)
		for _, status := range []string{StatusPending, StatusActive, StatusTerminating} {
			gauge(clusterQueueStatus, oneIf(status == cq.Status), cq.Name, status, role)
		}
		gauge(clusterQueueInfo, 1, cq.Name, cq.ParentCohort, cq.RootCohort, role)
		for _, r := range cq.Resources {
			gauge(resourceReserved, r.Reserved, cq.Cohort, cq.Name, r.Flavor, r.Resource, role)
			gauge(resourceUsed, r.Used, cq.Cohort, cq.Name, r.Flavor, r.Resource, role)
			gauge(nominalQuota, r.Nominal, cq.Cohort, cq.Name, r.Flavor, r.Resource, role)
			gauge(borrowingLimit, orInf(r.BorrowingLimit), cq.Cohort, cq.Name, r.Flavor, r.Resource, role)
			gauge(lendingLimit, orInf(r.LendingLimit), cq.Cohort, cq.Name, r.Flavor, r.Resource, role)
		}
		for resource, v := range cq.PendingResources {
			gauge(resourcePending, v, cq.Name, resource, role)
		}
		if cq.WeightedShare != nil {
			gauge(cqWeightedShare, float64(*cq.WeightedShare), cq.Name, cq.Cohort, role)
		}
	}
	for _, co := range s.Cohorts {
		gauge(cohortInfo, 1, co.Name, co.ParentCohort, co.RootCohort, role)
		if co.WeightedShare != nil {
			gauge(cohortWeightedShare, float64(*co.WeightedShare), co.Name, role)
		}
	}
	for name, t := range subtrees(s) {
		gauge(subtreeAdmitted, float64(t.admitted), name, role)
		for k, v := range t.quota {
			gauge(subtreeQuota, v, name, k.flavor, k.resource, role)
		}
		for k, v := range t.reserved {
			gauge(subtreeReserved, v, name, k.flavor, k.resource, role)
		}
	}
	for _, lq := range s.LocalQueues {
		gauge(lqPending, float64(lq.PendingActive), lq.Name, lq.Namespace, "active", role)
		gauge(lqPending, float64(lq.PendingInadmissible), lq.Name, lq.Namespace, "inadmissible", role)
		gauge(lqReserving, float64(lq.Reserving), lq.Name, lq.Namespace, role)
		gauge(lqAdmitted, float64(lq.Admitted), lq.Name, lq.Namespace, role)
		gauge(lqFinishedNow, float64(lq.Finished), lq.Name, lq.Namespace, role)
		for _, active := range []string{"True", "False", "Unknown"} {
			gauge(lqStatus, oneIf(active == lq.Active), lq.Name, lq.Namespace, active, role)
		}
		for _, r := range lq.Resources {
			gauge(lqReserved, r.Reserved, lq.Name, lq.Namespace, r.Flavor, r.Resource, role)
			gauge(lqUsed, r.Used, lq.Name, lq.Namespace, r.Flavor, r.Resource, role)
		}
	}
}

func oneIf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func orInf(v *float64) float64 {
	if v == nil {
		return math.Inf(1)
	}
	return *v
}
