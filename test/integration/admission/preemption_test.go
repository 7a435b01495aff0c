package admission

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// withinClusterQueue: LowerPriority lets an urgent workload evict a
// lower-priority one of its own queue; the victim says who took its place
// and queues again.
func TestPreemptionWithinClusterQueue(t *testing.T) {
	ns := namespace(t, nil)
	rf := flavor(cluster.Unique("flavor"), nil)
	cq := clusterQueue(cluster.Unique("cq"), "", fq{flavor: rf.Name, nominal: "2"})
	cq.Spec.Preemption = &kueue.ClusterQueuePreemption{WithinClusterQueue: kueue.PreemptionPolicyLowerPriority}
	cluster.MustCreate(t, rf, cq, localQueue(ns, "lq", cq.Name))
	waitActive(t, cq)

	low := newWorkload(ns, "low", "lq", 1, 2, "1")
	cluster.MustCreate(t, low)
	waitAdmitted(t, low)
	peer := newWorkload(ns, "peer", "lq", 1, 1, "1")
	cluster.MustCreate(t, peer)
	waitPending(t, peer, kueue.ReasonWaitingForQuota) // equal priority: no preemption

	urgent := newWorkload(ns, "urgent", "lq", 100, 2, "1")
	cluster.MustCreate(t, urgent)
	waitAdmitted(t, urgent)
	framework.Eventually(t, "the low-priority workload to be preempted and queued again", func(ctx context.Context) (bool, error) {
		current := &kueue.Workload{}
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(low), current); err != nil {
			return false, err
		}
		evicted := meta.FindStatusCondition(current.Status.Conditions, kueue.WorkloadEvicted)
		preempted := meta.FindStatusCondition(current.Status.Conditions, kueue.WorkloadPreempted)
		if evicted == nil || evicted.Reason != kueue.EvictedByPreemption || preempted == nil || preempted.Reason != kueue.InClusterQueueReason {
			return false, fmt.Errorf("Evicted %+v, Preempted %+v", evicted, preempted)
		}
		if !strings.Contains(preempted.Message, ns+"/urgent") {
			return false, fmt.Errorf("Preempted message %q doesn't name the preemptor", preempted.Message)
		}
		if current.Status.Admission != nil || !meta.IsStatusConditionTrue(current.Status.Conditions, kueue.WorkloadRequeued) {
			return false, fmt.Errorf("still reserved or not requeued: %v", current.Status.Conditions)
		}
		return true, nil
	})
	if got := admittedNow(t, low, peer, urgent); len(got) != 1 || got[0] != "urgent" {
		t.Errorf("admitted now %v, want only urgent", got)
	}
}
