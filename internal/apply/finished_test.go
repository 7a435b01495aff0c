package apply

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// The finished gauges count the finished Workloads that remain: one that
// finishes counts in its queues; a deleting or deleted one no longer.
func TestFinishedCounts(t *testing.T) {
	tr := NewTracker()
	count := func(want int) {
		t.Helper()
		byCQ, byLQ := tr.FinishedCounts()
		if byCQ["cq"] != want || byLQ["ns/lq"] != want {
			t.Errorf("finished: %v by ClusterQueue, %v by LocalQueue; want %d", byCQ, byLQ, want)
		}
	}
	wl := reservedWorkload("w", 0)
	tr.Observe(wl)
	count(0)
	done := wl.DeepCopy()
	done.ResourceVersion = "2"
	meta.SetStatusCondition(&done.Status.Conditions, metav1.Condition{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: "Succeeded"})
	tr.Observe(done)
	count(1)
	other := reservedWorkload("x", 0)
	meta.SetStatusCondition(&other.Status.Conditions, metav1.Condition{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: "Failed"})
	tr.Observe(other)
	count(2)
	deleting := done.DeepCopy()
	deleting.ResourceVersion = "3"
	now := metav1.Now()
	deleting.DeletionTimestamp = &now
	tr.Observe(deleting)
	count(1)
	tr.Deleted("ns/x", "")
	count(0)
}
