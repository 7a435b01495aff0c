package metrics

import (
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestRecorderCountsAdmissions(t *testing.T) {
	var none *Recorder
	none.Admitted(Admission{ClusterQueue: "nil-recorder"}) // counts nothing, does not panic
	none.AdmissionAttempt(true, time.Second)

	cohorts := func(cq string) []string {
		if cq == "rec-cq" {
			return []string{"rec-team", "rec-org"}
		}
		return nil
	}
	r := NewRecorder(func() string { return RoleLeader }, func(namespace, name string) bool { return name == "picked" }, cohorts)
	r.Admitted(Admission{ClusterQueue: "rec-cq", Namespace: "ns", LocalQueue: "picked", PriorityClass: "high", Waited: 3 * time.Second})
	r.Admitted(Admission{ClusterQueue: "rec-cq", Namespace: "ns", LocalQueue: "other", PriorityClass: "high", Waited: time.Minute})
	if got := testutil.ToFloat64(admittedTotal.WithLabelValues("rec-cq", "high", RoleLeader)); got != 2 {
		t.Errorf("admitted %v, want 2", got)
	}
	if got := testutil.ToFloat64(quotaReserved.WithLabelValues("rec-cq", "high", RoleLeader)); got != 2 {
		t.Errorf("quota reserved %v, want 2", got)
	}
	for _, cohort := range []string{"rec-team", "rec-org"} {
		if got := testutil.ToFloat64(subtreeAdmittedTotal.WithLabelValues(cohort, "high", RoleLeader)); got != 2 {
			t.Errorf("cohort %s's subtree admissions %v, want 2", cohort, got)
		}
	}
	if got := testutil.ToFloat64(lqAdmittedTotal.WithLabelValues("picked", "ns", "high", RoleLeader)); got != 1 {
		t.Errorf("the picked LocalQueue's admissions %v, want 1", got)
	}
	if n := testutil.CollectAndCount(lqAdmittedTotal); n != 1 {
		t.Errorf("%d LocalQueue series, want only the picked one's", n)
	}
	if n := testutil.CollectAndCount(admissionWait); n != 1 {
		t.Errorf("%d wait histograms, want 1", n)
	}
	// Kueue's buckets: 1 s, then 2.5 s doubling.
	if got := waitBuckets(4); !slices.Equal(got, []float64{1, 2.5, 5, 10}) {
		t.Errorf("buckets %v", got)
	}

	r.AdmissionAttempt(false, 10*time.Millisecond)
	if got := testutil.ToFloat64(admissionAttempts.WithLabelValues("inadmissible", RoleLeader)); got != 1 {
		t.Errorf("inadmissible attempts %v, want 1", got)
	}
}

// Evictions count under Kueue's reason and underlying cause: the execution
// time limit is a deactivation caused by it.
func TestRecorderCountsEvictionsPreemptionsAndFinishes(t *testing.T) {
	r := NewRecorder(func() string { return RoleStandalone }, func(string, string) bool { return true }, nil)
	w := Workload{ClusterQueue: "ev-cq", Namespace: "ns", LocalQueue: "lq", PriorityClass: "low"}
	r.Evicted(w, "Preempted")
	r.Evicted(w, "MaximumExecutionTimeExceeded")
	r.Preempted("ev-cq", "InClusterQueue")
	r.Finished(w)
	for _, tc := range []struct {
		got  float64
		what string
	}{
		{testutil.ToFloat64(evicted.WithLabelValues("ev-cq", "Preempted", "", "low", RoleStandalone)), "preempted eviction"},
		{testutil.ToFloat64(evicted.WithLabelValues("ev-cq", "Deactivated", "MaximumExecutionTimeExceeded", "low", RoleStandalone)), "execution time eviction"},
		{testutil.ToFloat64(lqEvicted.WithLabelValues("lq", "ns", "Preempted", "", "low", RoleStandalone)), "LocalQueue eviction"},
		{testutil.ToFloat64(preempted.WithLabelValues("ev-cq", "InClusterQueue", RoleStandalone)), "preemption"},
		{testutil.ToFloat64(finished.WithLabelValues("ev-cq", "low", RoleStandalone)), "finish"},
		{testutil.ToFloat64(lqFinished.WithLabelValues("lq", "ns", "low", RoleStandalone)), "LocalQueue finish"},
	} {
		if tc.got != 1 {
			t.Errorf("%s counted %v times, want 1", tc.what, tc.got)
		}
	}
	var none *Recorder
	none.Evicted(w, "Preempted")
	none.Preempted("x", "y")
	none.Finished(w)
}

// With admission checks, the reservation and the admission are counted
// apart, the checks' wait with the admission; pods becoming ready count
// their two waits.
func TestRecorderCountsTwoPhaseAdmissions(t *testing.T) {
	r := NewRecorder(func() string { return RoleLeader }, func(string, string) bool { return true }, nil)
	a := Admission{ClusterQueue: "two-phase", Namespace: "ns", LocalQueue: "lq", PriorityClass: "p", Waited: time.Second, Checked: true}
	r.Admitted(a)
	if got := testutil.ToFloat64(quotaReserved.WithLabelValues("two-phase", "p", RoleLeader)); got != 1 {
		t.Errorf("reserved %v, want 1", got)
	}
	if got := testutil.ToFloat64(admittedTotal.WithLabelValues("two-phase", "p", RoleLeader)); got != 0 {
		t.Errorf("admitted %v before the checks passed, want 0", got)
	}
	r.ChecksPassed(a, 30*time.Second)
	if got := testutil.ToFloat64(admittedTotal.WithLabelValues("two-phase", "p", RoleLeader)); got != 1 {
		t.Errorf("admitted %v once the checks passed, want 1", got)
	}
	if n := testutil.CollectAndCount(checksWait); n != 1 {
		t.Errorf("%d checks-wait histograms, want 1", n)
	}
	r.PodsReady(a, 5*time.Second)
	if n := testutil.CollectAndCount(admittedUntilReady); n != 1 {
		t.Errorf("%d admitted-until-ready histograms, want 1", n)
	}
	if n := testutil.CollectAndCount(lqReadyWait); n != 1 {
		t.Errorf("%d LocalQueue ready-wait histograms, want 1", n)
	}
}
