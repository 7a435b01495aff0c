package admission

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// waitEvicted waits until the workload lost its reservation with Evicted's
// reason, and Requeued as wanted.
func waitEvicted(t *testing.T, wl *kueue.Workload, reason string, requeued bool) {
	t.Helper()
	framework.Eventually(t, fmt.Sprintf("%s to be evicted (%s)", wl.Name, reason), func(ctx context.Context) (bool, error) {
		current := get(t, wl)
		ev := meta.FindStatusCondition(current.Status.Conditions, kueue.WorkloadEvicted)
		rq := meta.FindStatusCondition(current.Status.Conditions, kueue.WorkloadRequeued)
		if current.Status.Admission != nil || ev == nil || ev.Reason != reason || rq == nil {
			return false, fmt.Errorf("admission %v, conditions %v", current.Status.Admission, current.Status.Conditions)
		}
		return (rq.Status == "True") == requeued, nil
	})
}

// Acceptance 9: Hold admits nothing new; HoldAndDrain also evicts the
// admitted (ClusterQueue and LocalQueue); active=false evicts and keeps the
// workload out; maximumExecutionTimeSeconds deactivates a workload that ran
// too long.
func TestStopPolicies(t *testing.T) {
	setup := func(t *testing.T) (string, *kueue.ClusterQueue, *kueue.LocalQueue) {
		ns, rf, cqName := namespace(t, nil), cluster.Unique("rf"), cluster.Unique("cq")
		cq := clusterQueue(cqName, "", fq{flavor: rf, nominal: "4"})
		lq := localQueue(ns, "lq", cqName)
		cluster.MustCreate(t, flavor(rf, nil), cq, lq)
		return ns, cq, lq
	}

	t.Run("ClusterQueue Hold keeps admitted, admits nothing new", func(t *testing.T) {
		ns, cq, _ := setup(t)
		running := newWorkload(ns, "running", "lq", 0, 1, "1")
		cluster.MustCreate(t, running)
		waitAdmitted(t, running)
		update(t, cq, func() { cq.Spec.StopPolicy = ptr.To(kueue.StopPolicyHold) })
		waiting := newWorkload(ns, "waiting", "lq", 0, 1, "1")
		cluster.MustCreate(t, waiting)
		waitPending(t, waiting, kueue.ReasonPending, "is inactive", "stopPolicy is Hold")
		if !reserved(get(t, running)) {
			t.Fatal("Hold evicted an admitted workload")
		}
		update(t, cq, func() { cq.Spec.StopPolicy = ptr.To(kueue.StopPolicyNone) })
		waitAdmitted(t, waiting)
	})

	t.Run("ClusterQueue HoldAndDrain evicts", func(t *testing.T) {
		ns, cq, _ := setup(t)
		running := newWorkload(ns, "running", "lq", 0, 1, "1")
		cluster.MustCreate(t, running)
		waitAdmitted(t, running)
		update(t, cq, func() { cq.Spec.StopPolicy = ptr.To(kueue.StopPolicyHoldAndDrain) })
		waitEvicted(t, running, kueue.EvictedByClusterQueueStopped, true)
		waitPending(t, running, kueue.ReasonPending, "stopPolicy is HoldAndDrain")
		update(t, cq, func() { cq.Spec.StopPolicy = ptr.To(kueue.StopPolicyNone) })
		waitAdmitted(t, running)
	})

	t.Run("LocalQueue HoldAndDrain evicts", func(t *testing.T) {
		ns, _, lq := setup(t)
		running := newWorkload(ns, "running", "lq", 0, 1, "1")
		cluster.MustCreate(t, running)
		waitAdmitted(t, running)
		update(t, lq, func() { lq.Spec.StopPolicy = ptr.To(kueue.StopPolicyHoldAndDrain) })
		waitEvicted(t, running, kueue.EvictedByLocalQueueStopped, true)
		waitPending(t, running, kueue.ReasonPending, "LocalQueue lq is stopped")
		update(t, lq, func() { lq.Spec.StopPolicy = ptr.To(kueue.StopPolicyNone) })
		waitAdmitted(t, running)
	})

	t.Run("active=false evicts and keeps out", func(t *testing.T) {
		ns, _, _ := setup(t)
		wl := newWorkload(ns, "wl", "lq", 0, 4, "1")
		cluster.MustCreate(t, wl)
		waitAdmitted(t, wl)
		update(t, wl, func() { wl.Spec.Active = ptr.To(false) })
		waitEvicted(t, wl, kueue.EvictedByDeactivation, false)
		// Its quota is free for others, and it stays out.
		other := newWorkload(ns, "other", "lq", 0, 4, "1")
		cluster.MustCreate(t, other)
		waitAdmitted(t, other)
		finish(t, other)
		probe(t)
		if reserved(get(t, wl)) {
			t.Fatal("a deactivated workload was admitted again")
		}
		update(t, wl, func() { wl.Spec.Active = ptr.To(true) })
		waitAdmitted(t, wl)
	})

	t.Run("maximumExecutionTimeSeconds", func(t *testing.T) {
		ns, _, _ := setup(t)
		wl := newWorkload(ns, "wl", "lq", 0, 1, "1")
		wl.Spec.MaximumExecutionTimeSeconds = ptr.To[int32](1)
		cluster.MustCreate(t, wl)
		// Admitted for a second only: the eviction (and the time it ran,
		// checked below) proves the admission without racing to see it.
		waitEvicted(t, wl, kueue.EvictedByMaximumExecutionTime, false)
		current := get(t, wl)
		if current.Spec.Active == nil || *current.Spec.Active {
			t.Error("the workload was not deactivated")
		}
		if p := current.Status.AccumulatedPastExecutionTimeSeconds; p == nil || *p < 1 {
			t.Errorf("accumulatedPastExecutionTimeSeconds = %v, want at least 1", p)
		}
	})
}

// Acceptance 10: pending reasons and messages, never rewritten unchanged.
func TestPendingReasons(t *testing.T) {
	ns, rf, cqName := namespace(t, nil), cluster.Unique("rf"), cluster.Unique("cq")
	cluster.MustCreate(t, flavor(rf, nil), clusterQueue(cqName, "", fq{flavor: rf, nominal: "4"}), localQueue(ns, "lq", cqName))

	noQueue := newWorkload(ns, "no-queue", "missing", 0, 1, "1")
	gpu := newWorkload(ns, "gpu", "lq", 0, 1, "1")
	gpu.Spec.PodSets[0].Template.Spec.Containers[0].Resources.Requests["nvidia.com/gpu"] = *ptr.To(quantity("1"))
	huge := newWorkload(ns, "huge", "lq", 0, 5, "1")
	filler := newWorkload(ns, "filler", "lq", 0, 4, "1")
	cluster.MustCreate(t, noQueue, gpu, huge, filler)
	waitAdmitted(t, filler)
	waitPending(t, noQueue, kueue.ReasonPending, "LocalQueue missing doesn't exist in namespace "+ns)
	waitPending(t, gpu, kueue.ReasonNoMatchingFlavor, "resource nvidia.com/gpu is not covered by ClusterQueue "+cqName)
	waitPending(t, huge, kueue.ReasonExceedsMaxQuota, "requests 5 of cpu in flavor "+rf+" exceed the most ClusterQueue "+cqName+" can get (4)")
	waiting := newWorkload(ns, "waiting", "lq", 0, 1, "1")
	cluster.MustCreate(t, waiting)
	before := waitPending(t, waiting, kueue.ReasonWaitingForQuota,
		"insufficient quota for cpu in flavor "+rf+": requests 1, available 0 of nominal 4, 4 in use, cohort can lend 0")

	// Many more cycles while quota stays full: the verdict is the same, so
	// the workload is not written again.
	for i := range 5 {
		more := newWorkload(ns, fmt.Sprintf("more-%d", i), "lq", 0, 1, "1")
		cluster.MustCreate(t, more)
		waitPending(t, more, kueue.ReasonWaitingForQuota)
		probe(t)
	}
	if after := get(t, waiting); after.ResourceVersion != before.ResourceVersion {
		t.Errorf("an unchanged verdict was written again: resourceVersion %s -> %s", before.ResourceVersion, after.ResourceVersion)
	}
}
