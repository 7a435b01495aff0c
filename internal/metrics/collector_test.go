package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestCollectorReportsTheState(t *testing.T) {
	share := int64(250)
	limit := 4.0
	c := &Collector{}
	c.SetSource(func() State {
		return State{Role: RoleLeader,
			ClusterQueues: []ClusterQueue{{Name: "team-a", Cohort: "org", ParentCohort: "org", RootCohort: "root", Status: StatusActive,
				PendingActive: 3, PendingInadmissible: 1, Reserving: 2, Admitted: 1, WeightedShare: &share,
				Resources: []Resource{{Flavor: "spot", Resource: "cpu", Nominal: 8, BorrowingLimit: &limit, Reserved: 6, Used: 2.5}}}},
			Cohorts:     []Cohort{{Name: "org", ParentCohort: "root", RootCohort: "root"}},
			LocalQueues: []LocalQueue{{Namespace: "ns", Name: "main", ClusterQueue: "team-a", PendingActive: 2, Active: "True"}},
		}
	}, Build{Version: "v1.2.3"})

	want := `
# HELP kueue_pending_workloads Workloads waiting in the ClusterQueue; status active: the scheduler will try them, inadmissible: parked until something they need changes.
# TYPE kueue_pending_workloads gauge
kueue_pending_workloads{cluster_queue="team-a",replica_role="leader",status="active"} 3
kueue_pending_workloads{cluster_queue="team-a",replica_role="leader",status="inadmissible"} 1
# HELP kueue_cluster_queue_borrowing_limit The ClusterQueue's borrowing limit, per flavor and resource; +Inf when it has none.
# TYPE kueue_cluster_queue_borrowing_limit gauge
kueue_cluster_queue_borrowing_limit{cluster_queue="team-a",cohort="org",flavor="spot",replica_role="leader",resource="cpu"} 4
# HELP kueue_cluster_queue_lending_limit The ClusterQueue's lending limit, per flavor and resource; +Inf when it has none.
# TYPE kueue_cluster_queue_lending_limit gauge
kueue_cluster_queue_lending_limit{cluster_queue="team-a",cohort="org",flavor="spot",replica_role="leader",resource="cpu"} +Inf
# HELP kueue_cluster_queue_resource_usage Quota used by the ClusterQueue's admitted workloads, per flavor and resource.
# TYPE kueue_cluster_queue_resource_usage gauge
kueue_cluster_queue_resource_usage{cluster_queue="team-a",cohort="org",flavor="spot",replica_role="leader",resource="cpu"} 2.5
# HELP kueue_cluster_queue_status 1 for the ClusterQueue's status (pending: inactive, active, terminating: being deleted), 0 for the others.
# TYPE kueue_cluster_queue_status gauge
kueue_cluster_queue_status{cluster_queue="team-a",replica_role="leader",status="active"} 1
kueue_cluster_queue_status{cluster_queue="team-a",replica_role="leader",status="pending"} 0
kueue_cluster_queue_status{cluster_queue="team-a",replica_role="leader",status="terminating"} 0
# HELP kueue_cluster_queue_weighted_share The ClusterQueue's fair-sharing share (status.fairSharing.weightedShare); only with fair sharing on.
# TYPE kueue_cluster_queue_weighted_share gauge
kueue_cluster_queue_weighted_share{cluster_queue="team-a",cohort="org",replica_role="leader"} 250
# HELP kueue_local_queue_pending_workloads Workloads waiting in the LocalQueue, by status as kueue_pending_workloads.
# TYPE kueue_local_queue_pending_workloads gauge
kueue_local_queue_pending_workloads{name="main",namespace="ns",replica_role="leader",status="active"} 2
kueue_local_queue_pending_workloads{name="main",namespace="ns",replica_role="leader",status="inadmissible"} 0
# HELP kueue_cohort_info 1 per Cohort, with its place in the cohort tree, for joins.
# TYPE kueue_cohort_info gauge
kueue_cohort_info{cohort="org",parent_cohort="root",replica_role="leader",root_cohort="root"} 1
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "kueue_pending_workloads", "kueue_cluster_queue_borrowing_limit",
		"kueue_cluster_queue_lending_limit", "kueue_cluster_queue_resource_usage", "kueue_cluster_queue_status",
		"kueue_cluster_queue_weighted_share", "kueue_local_queue_pending_workloads", "kueue_cohort_info"); err != nil {
		t.Error(err)
	}
	// No cohort share without fair sharing; build info always.
	if n := testutil.CollectAndCount(c, "kueue_cohort_weighted_share"); n != 0 {
		t.Errorf("%d cohort shares without fair sharing", n)
	}
	if n := testutil.CollectAndCount(c, "kueue_build_info"); n != 1 {
		t.Errorf("%d build infos", n)
	}
	// Without a source (a follower, a manager not set up yet): the build only.
	c.SetSource(nil, Build{})
	if n := testutil.CollectAndCount(c); n != 1 {
		t.Errorf("%d series without a source, want the build only", n)
	}
	// The descriptions are valid for a registry (no duplicate, no clash).
	if err := prometheus.NewPedanticRegistry().Register(&Collector{}); err != nil {
		t.Fatal(err)
	}
}
