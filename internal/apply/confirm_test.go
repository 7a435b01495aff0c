package apply

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/workload"
)

func TestPreemptionConfirmer(t *testing.T) {
	p := &preemptionConfirmer{}
	grace := time.Second
	at := time.Unix(1000, 0)
	step := func(d time.Duration) time.Time { at = at.Add(d); return at }
	if ok, first := p.confirmed("a", at, grace); ok || !first {
		t.Fatalf("first wish: confirmed %v first %v, want false true", ok, first)
	}
	if ok, first := p.confirmed("a", step(500*time.Millisecond), grace); ok || first {
		t.Fatalf("within the grace: confirmed %v first %v, want false false", ok, first)
	}
	if ok, _ := p.confirmed("a", step(500*time.Millisecond), grace); !ok {
		t.Fatal("asked again after the grace: not confirmed")
	}
	// Confirmed once: the next wish starts over.
	if ok, first := p.confirmed("a", step(time.Millisecond), grace); ok || !first {
		t.Fatalf("after a confirmation: confirmed %v first %v, want false true", ok, first)
	}
	// A wish not asked again within the window starts over too.
	p.confirmed("b", at, grace)
	if ok, first := p.confirmed("b", step(time.Second+confirmWindow), grace); ok || !first {
		t.Fatalf("a stale wish: confirmed %v first %v, want false true", ok, first)
	}
	p.prune(step(time.Second+confirmWindow), grace)
	if len(p.wanted) != 0 {
		t.Fatalf("prune left %v", p.wanted)
	}
	if ok, _ := p.confirmed("c", at, 0); !ok {
		t.Fatal("no grace: not confirmed at once")
	}
}

func TestPreemptionWaitsForAViewOneGraceNewer(t *testing.T) {
	preemption := &kueue.ClusterQueuePreemption{WithinClusterQueue: kueue.PreemptionPolicyLowerPriority}
	t.Run("the victim finishes meanwhile: no preemption", func(t *testing.T) {
		w := newWorld(t, clusterQueue("1", preemption), reservedWorkload("low", 0), pendingWorkload("high", 100))
		w.admitter.PreemptionGrace = time.Second
		w.cycleAndSettle()
		if n := w.faults.patchCount("low"); n != 0 {
			t.Fatalf("%d preemption writes within the grace, want 0", n)
		}
		if workload.HasQuotaReservation(w.get("high")) {
			t.Fatal("the preemptor was admitted with no room")
		}
		low := w.get("low")
		meta.SetStatusCondition(&low.Status.Conditions, metav1.Condition{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: "Succeeded"})
		if err := w.client.Status().Update(w.ctx, low); err != nil {
			t.Fatal(err)
		}
		w.tracker.Observe(low)
		w.step(time.Second)
		w.cycleAndSettle()
		if !workload.HasQuotaReservation(w.get("high")) {
			t.Fatal("the preemptor was not admitted on the room the finished victim gave back")
		}
		if n := w.faults.patchCount("low"); n != 0 {
			t.Fatalf("%d preemption writes of a victim that finished, want 0", n)
		}
	})
	t.Run("still needed one grace later: preempted", func(t *testing.T) {
		w := newWorld(t, clusterQueue("1", preemption), reservedWorkload("low", 0), pendingWorkload("high", 100))
		w.admitter.PreemptionGrace = time.Second
		w.cycleAndSettle()
		w.step(500 * time.Millisecond)
		w.cycleAndSettle()
		if n := w.faults.patchCount("low"); n != 0 {
			t.Fatalf("%d preemption writes within the grace, want 0", n)
		}
		w.step(500 * time.Millisecond)
		w.cycleAndSettle()
		if !evicted(w.get("low")) {
			t.Fatal("the victim was not preempted once the grace passed")
		}
	})
}
