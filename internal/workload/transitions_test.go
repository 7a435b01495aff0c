package workload

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

func TestEvictionInTwoStepsAndReadmission(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	wl := &kueue.Workload{}
	SetReserved(wl, &kueue.Admission{ClusterQueue: "cq"}, nil, now)

	MarkEvicted(wl, kueue.EvictedByPreemption, "to make room", now.Add(10*time.Second))
	meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadPreempted, Status: metav1.ConditionTrue, Reason: kueue.InClusterQueueReason})
	if !IsEvicting(wl) || !HasQuotaReservation(wl) {
		t.Fatal("a marked workload keeps its reservation until its job stopped")
	}
	ClearReservation(wl, true, now.Add(20*time.Second))
	if HasQuotaReservation(wl) || IsEvicting(wl) || wl.Status.Admission != nil {
		t.Fatalf("after ClearReservation: %v", wl.Status.Conditions)
	}
	if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadRequeued); c == nil || c.Status != metav1.ConditionTrue || c.Reason != kueue.EvictedByPreemption {
		t.Errorf("Requeued %+v, want True with the eviction's reason", c)
	}
	if past := wl.Status.AccumulatedPastExecutionTimeSeconds; past == nil || *past != 20 {
		t.Errorf("accumulated execution time %v, want 20 s", past)
	}
	SetReserved(wl, &kueue.Admission{ClusterQueue: "cq"}, nil, now.Add(30*time.Second))
	for _, typ := range []string{kueue.WorkloadEvicted, kueue.WorkloadPreempted} {
		if meta.IsStatusConditionTrue(wl.Status.Conditions, typ) {
			t.Errorf("%s still True after admission again", typ)
		}
	}
}
