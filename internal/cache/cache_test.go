package cache

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/quota"
	"github.com/sluicehq/sluice/internal/workload"
)

func queueWithCPU(name string, nominal string) *kueue.ClusterQueue {
	return &kueue.ClusterQueue{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: kueue.ClusterQueueSpec{ResourceGroups: []kueue.ResourceGroup{{
			CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
			Flavors: []kueue.FlavorQuotas{{Name: "default", Resources: []kueue.ResourceQuota{
				{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse(nominal)},
			}}},
		}}},
	}
}

func reservedWorkload(name, clusterQueue, cpu string) *kueue.Workload {
	return &kueue.Workload{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec:       kueue.WorkloadSpec{QueueName: "lq"},
		Status: kueue.WorkloadStatus{Admission: &kueue.Admission{
			ClusterQueue: kueue.ClusterQueueReference(clusterQueue),
			PodSetAssignments: []kueue.PodSetAssignment{{
				Name:          "main",
				Flavors:       map[corev1.ResourceName]kueue.ResourceFlavorReference{corev1.ResourceCPU: "default"},
				ResourceUsage: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
				Count:         ptr.To[int32](1),
			}},
		}},
	}
}

var cpu = quota.FlavorResource{Flavor: "default", Resource: corev1.ResourceCPU}

// The snapshot charges each queue its running total; every way a
// reservation comes, changes and goes must keep the totals exact.
func TestSnapshotUsageFollowsReservations(t *testing.T) {
	c := New()
	c.SetClusterQueue(queueWithCPU("a", "10"), true, "")
	c.SetClusterQueue(queueWithCPU("b", "10"), true, "")
	usage := func(queue string) int64 { return c.Snapshot().ClusterQueues[queue].Node.Usage(cpu) }
	steps := []struct {
		name       string
		do         func()
		wantA      int64
		wantB      int64
		wantTotals int
	}{
		{"assume w1 in a", func() {
			c.Assume(&workload.Info{Key: "ns/w1", Namespace: "ns", LocalQueue: "lq"}, "a", quota.Amounts{cpu: 2000}, time.Unix(0, 0))
		}, 2000, 0, 1},
		{"w1 written with the same usage", func() { c.SetReserved(reservedWorkload("w1", "a", "2"), false) }, 2000, 0, 1},
		{"w2 reserved in a", func() { c.SetReserved(reservedWorkload("w2", "a", "3"), false) }, 5000, 0, 1},
		{"w2 now holds more", func() { c.SetReserved(reservedWorkload("w2", "a", "4"), false) }, 6000, 0, 1},
		{"w2 moves to b", func() { c.SetReserved(reservedWorkload("w2", "b", "4"), false) }, 2000, 4000, 2},
		{"w1 released", func() { c.Release("ns/w1") }, 0, 4000, 1},
		{"unknown released", func() { c.Release("ns/nobody") }, 0, 4000, 1},
		{"w2 released", func() { c.Release("ns/w2") }, 0, 0, 0},
	}
	for _, s := range steps {
		s.do()
		if a, b := usage("a"), usage("b"); a != s.wantA || b != s.wantB {
			t.Fatalf("after %s: usage a=%d b=%d, want a=%d b=%d", s.name, a, b, s.wantA, s.wantB)
		}
		if len(c.usageByQueue) != s.wantTotals {
			t.Fatalf("after %s: %d queue totals kept (%v), want %d", s.name, len(c.usageByQueue), c.usageByQueue, s.wantTotals)
		}
	}
}

// An assumed admission orders victims (most recently admitted first) by
// the decision's time, given by the scheduler's clock: the cache reads no
// clock of its own.
func TestAssumedAdmissionTimeIsTheDecisions(t *testing.T) {
	c := New()
	cq := queueWithCPU("a", "10")
	cq.Spec.Preemption = &kueue.ClusterQueuePreemption{WithinClusterQueue: kueue.PreemptionPolicyLowerPriority}
	c.SetClusterQueue(cq, true, "")
	decided := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	c.Assume(&workload.Info{Key: "ns/w1", Namespace: "ns", LocalQueue: "lq"}, "a", quota.Amounts{cpu: 2000}, decided)
	candidates := c.Snapshot().Admitted["a"]
	if len(candidates) != 1 || !candidates[0].AdmittedAt.Equal(decided) {
		t.Fatalf("candidates %v, want ns/w1 admitted at %v", candidates, decided)
	}
}
