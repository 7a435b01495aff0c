package workload

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

func TestNeededChecksFollowOnFlavors(t *testing.T) {
	strategy := &kueue.AdmissionChecksStrategy{AdmissionChecks: []kueue.AdmissionCheckStrategyRule{
		{Name: "all"}, {Name: "gpu", OnFlavors: []kueue.ResourceFlavorReference{"a100"}}, {Name: "spot", OnFlavors: []kueue.ResourceFlavorReference{"spot"}}}}
	adm := &kueue.Admission{PodSetAssignments: []kueue.PodSetAssignment{{Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{"cpu": "default"}},
		{Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{"nvidia.com/gpu": "a100"}}}}
	if got := NeededChecks(strategy, adm); !slices.Equal(got, []string{"all", "gpu"}) {
		t.Fatalf("NeededChecks = %v, want [all gpu]", got)
	}
	if got := NeededChecks(nil, adm); got != nil {
		t.Fatalf("no strategy: %v", got)
	}
}

// Reserving with checks leaves Admitted False, naming them; the checks
// all Ready admit; a check that reverts un-admits and counts the time run.
func TestSyncAdmittedFollowsTheChecks(t *testing.T) {
	now := time.Unix(10_000, 0)
	wl := &kueue.Workload{}
	SetReserved(wl, &kueue.Admission{ClusterQueue: "cq"}, []string{"b", "a"}, now)
	if IsAdmitted(wl) || len(wl.Status.AdmissionChecks) != 2 || wl.Status.AdmissionChecks[0].Name != "a" {
		t.Fatalf("reserved with checks: admitted %v, checks %+v", IsAdmitted(wl), wl.Status.AdmissionChecks)
	}
	c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadAdmitted)
	if c.Reason != ReasonUnsatisfiedAdmissionChecks || !strings.Contains(c.Message, "a is Pending since") || !strings.Contains(c.Message, "b is Pending") {
		t.Fatalf("Admitted = %+v", c)
	}
	wl.Status.AdmissionChecks[0].State = kueue.CheckStateReady
	wl.Status.AdmissionChecks[1].State = kueue.CheckStateReady
	if !SyncAdmitted(wl, now.Add(time.Minute), 0) || !IsAdmitted(wl) {
		t.Fatal("all checks Ready does not admit")
	}
	if SyncAdmitted(wl, now.Add(2*time.Minute), 0) {
		t.Fatal("nothing changed, yet SyncAdmitted reports a change")
	}
	wl.Status.AdmissionChecks[1].State = kueue.CheckStatePending
	if !SyncAdmitted(wl, now.Add(11*time.Minute), 0) || IsAdmitted(wl) {
		t.Fatal("a check back to Pending keeps the admission")
	}
	if got := ptr.Deref(wl.Status.AccumulatedPastExecutionTimeSeconds, 0); got != 600 {
		t.Fatalf("accumulated %ds, want 600", got)
	}
}

// The stuck part of the message changes at stuckAfter, then at each
// doubling: a bounded number of writes, whatever the wait.
func TestStuckStepsDouble(t *testing.T) {
	since := time.Unix(0, 0)
	for age, want := range map[time.Duration]time.Duration{time.Minute: 0, 10 * time.Minute: 10 * time.Minute, 25 * time.Minute: 20 * time.Minute, 90 * time.Minute: 80 * time.Minute} {
		if got := StuckStep(age, 10*time.Minute); got != want {
			t.Errorf("StuckStep(%v) = %v, want %v", age, got, want)
		}
	}
	if got := NextStuckStep(since, since.Add(time.Minute), 10*time.Minute); !got.Equal(since.Add(10 * time.Minute)) {
		t.Errorf("next step before the first = %v", got)
	}
	if got := NextStuckStep(since, since.Add(25*time.Minute), 10*time.Minute); !got.Equal(since.Add(40 * time.Minute)) {
		t.Errorf("next step after 25m = %v", got)
	}
	if !NextStuckStep(since, since, 0).IsZero() {
		t.Error("stuckAfter 0 schedules a step")
	}
}

// Retry waits for the latest requeueAfterSeconds among the checks in Retry;
// ClearReservation resets the checks and keeps their retry counts.
func TestRetryAtAndReset(t *testing.T) {
	at := metav1.NewTime(time.Unix(1000, 0))
	wl := &kueue.Workload{Status: kueue.WorkloadStatus{AdmissionChecks: []kueue.AdmissionCheckState{
		{Name: "a", State: kueue.CheckStateRetry, LastTransitionTime: at, RequeueAfterSeconds: ptr.To[int32](30), Message: "later"},
		{Name: "b", State: kueue.CheckStateRetry, LastTransitionTime: at, RequeueAfterSeconds: ptr.To[int32](90)},
		{Name: "c", State: kueue.CheckStateReady, LastTransitionTime: at, RequeueAfterSeconds: ptr.To[int32](900)}}}}
	if got := RetryAt(wl); !got.Equal(at.Add(90 * time.Second)) {
		t.Fatalf("RetryAt = %v", got)
	}
	CountRetries(wl)
	ResetChecks(wl, time.Unix(2000, 0))
	for _, c := range wl.Status.AdmissionChecks {
		if c.State != kueue.CheckStatePending || c.Message != "" || c.RequeueAfterSeconds != nil {
			t.Fatalf("after reset: %+v", c)
		}
	}
	if ptr.Deref(wl.Status.AdmissionChecks[0].RetryCount, 0) != 1 || wl.Status.AdmissionChecks[2].RetryCount != nil {
		t.Fatalf("retry counts: %+v", wl.Status.AdmissionChecks)
	}
}
