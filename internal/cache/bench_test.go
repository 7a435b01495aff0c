package cache

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// BenchmarkSnapshot measures the snapshot every cycle starts from, at the
// large scenario's size: 1,000 ClusterQueues in 10 cohorts, a LocalQueue
// each, 10,000 admitted workloads.
// Run with: go test -bench Snapshot ./internal/cache
func BenchmarkSnapshot(b *testing.B) {
	c := New()
	for q := range 1000 {
		cq := queueWithCPU(fmt.Sprintf("cq-%d", q), "10")
		cq.Spec.CohortName = kueue.CohortReference(fmt.Sprintf("cohort-%d", q%10))
		cq.Spec.NamespaceSelector = &metav1.LabelSelector{}
		c.SetClusterQueue(cq, true, "")
		c.SetLocalQueue(&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: cq.Name},
			Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(cq.Name)}})
	}
	for i := range 10_000 {
		c.SetReserved(reservedWorkload(fmt.Sprintf("w-%d", i), fmt.Sprintf("cq-%d", i%1000), "1"), false)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = c.Snapshot()
	}
}
