package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// root (own quota 2 cpu) <- org <- team-a, team-b; team-c in root; lone
// in no cohort. A cycle between x and y ends the walk instead of looping.
func TestCohortSubtrees(t *testing.T) {
	cpu := func(nominal, reserved float64) []Resource {
		return []Resource{{Flavor: "default", Resource: "cpu", Nominal: nominal, Reserved: reserved}}
	}
	s := State{Role: RoleLeader,
		Cohorts: []Cohort{{Name: "root", Quota: cpu(2, 0)}, {Name: "org", ParentCohort: "root"}, {Name: "x", ParentCohort: "y"}, {Name: "y", ParentCohort: "x"}},
		ClusterQueues: []ClusterQueue{
			{Name: "team-a", Cohort: "org", Admitted: 2, Resources: cpu(4, 3)},
			{Name: "team-b", Cohort: "org", Admitted: 1, Resources: cpu(4, 1)},
			{Name: "team-c", Cohort: "root", Admitted: 5, Resources: cpu(1, 1)},
			{Name: "lone", Admitted: 7, Resources: cpu(9, 9)},
			{Name: "looped", Cohort: "x", Admitted: 1},
		}}
	got := subtrees(s)
	k := flavorResource{"default", "cpu"}
	for _, tc := range []struct {
		cohort          string
		admitted        int
		quota, reserved float64
	}{{"root", 8, 11, 5}, {"org", 3, 8, 4}, {"x", 1, 0, 0}, {"y", 1, 0, 0}} {
		st := got[tc.cohort]
		if st == nil || st.admitted != tc.admitted || st.quota[k] != tc.quota || st.reserved[k] != tc.reserved {
			t.Errorf("%s: got %+v, want admitted %d, quota %v, reserved %v", tc.cohort, st, tc.admitted, tc.quota, tc.reserved)
		}
	}
	if _, ok := got[""]; ok {
		t.Error("a subtree for ClusterQueues without a cohort")
	}

	c := &Collector{}
	c.SetSource(func() State { return s }, Build{})
	want := `
# HELP kueue_cohort_subtree_admitted_active_workloads Admitted workloads that have not finished, in the ClusterQueues of the cohort's subtree.
# TYPE kueue_cohort_subtree_admitted_active_workloads gauge
kueue_cohort_subtree_admitted_active_workloads{cohort="org",replica_role="leader"} 3
kueue_cohort_subtree_admitted_active_workloads{cohort="root",replica_role="leader"} 8
kueue_cohort_subtree_admitted_active_workloads{cohort="x",replica_role="leader"} 1
kueue_cohort_subtree_admitted_active_workloads{cohort="y",replica_role="leader"} 1
# HELP kueue_cohort_subtree_quota Nominal quota of the cohort's subtree (its own, its cohorts' and its ClusterQueues'), per flavor and resource.
# TYPE kueue_cohort_subtree_quota gauge
kueue_cohort_subtree_quota{cohort="org",flavor="default",replica_role="leader",resource="cpu"} 8
kueue_cohort_subtree_quota{cohort="root",flavor="default",replica_role="leader",resource="cpu"} 11
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "kueue_cohort_subtree_admitted_active_workloads", "kueue_cohort_subtree_quota"); err != nil {
		t.Error(err)
	}
}

func TestPendingResources(t *testing.T) {
	c := &Collector{}
	c.SetSource(func() State {
		return State{Role: RoleLeader, ClusterQueues: []ClusterQueue{{Name: "q", PendingResources: map[string]float64{"cpu": 3, "memory": 0}}}}
	}, Build{})
	want := `
# HELP kueue_cluster_queue_resource_pending Requests of the ClusterQueue's waiting workloads (not yet assigned to flavors), per resource.
# TYPE kueue_cluster_queue_resource_pending gauge
kueue_cluster_queue_resource_pending{cluster_queue="q",replica_role="leader",resource="cpu"} 3
kueue_cluster_queue_resource_pending{cluster_queue="q",replica_role="leader",resource="memory"} 0
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "kueue_cluster_queue_resource_pending"); err != nil {
		t.Error(err)
	}
}
