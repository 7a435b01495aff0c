package apply

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/apis/scheme"
	"github.com/sluicehq/sluice/internal/quota"
	"github.com/sluicehq/sluice/internal/workload"
)

// Each test here forces one interleaving of the write path that once lost
// (or could lose) a charge, step by step on the Tracker, in the order the
// write path, the watch and the cycles would make them; docs/reliability.md
// lists them. The randomised property test (writepath_property_test.go)
// finds the same ones by chance.

var oneCPU = quota.Amounts{{Flavor: "default", Resource: corev1.ResourceCPU}: 1000}

// at is a version of workload w: pending, or holding a reservation.
func at(rv string, reserved bool) *kueue.Workload {
	wl := pendingWorkload("w", 0)
	if reserved {
		wl = reservedWorkload("w", 0)
	}
	wl.ResourceVersion = rv
	return wl
}

func finishedAt(rv string) *kueue.Workload {
	wl := at(rv, true)
	meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: "Succeeded"})
	return wl
}

// assumeQueued admits the workload as a cycle would: the queued version.
func assumeQueued(t *testing.T, tr *Tracker) AdmissionID {
	t.Helper()
	pending := tr.Queues.Pending()
	if len(pending) != 1 {
		t.Fatalf("%d workloads queued, want 1", len(pending))
	}
	return tr.Assume(pending[0], "cq", oneCPU, time.Unix(5000, 0))
}

func wantCharged(t *testing.T, tr *Tracker, want bool, when string) {
	t.Helper()
	if got := tr.Cache.Holds("ns/w"); got != want {
		t.Fatalf("%s: charged = %v, want %v", when, got, want)
	}
}

// The interleaving the load test found (issue 37): a recheck started for a
// refused admission reads a version that the watch then delivers too; the
// workload is admitted again, and the late read must not take the second
// admission's charge.
func TestRecheckSettlesOnlyTheAdmissionItWasStartedFor(t *testing.T) {
	tr := NewTracker()
	tr.Observe(at("1", false))
	// 1. Cycle N assumes W on V1; the write gets 409: refused, recheck queued.
	first := assumeQueued(t, tr)
	tr.Refused("ns/w", first)
	wantCharged(t, tr, false, "refused")
	// 2. The recheck passes Unsettled and starts its read, which will return V2.
	if !tr.Unsettled("ns/w", first) {
		t.Fatal("a refused admission is not unsettled")
	}
	read := at("2", false)
	// 3. The watch delivers V2: the refused admission is settled, W queued.
	tr.Observe(at("2", false))
	if tr.Unsettled("ns/w", first) {
		t.Fatal("the watch did not settle the refused admission")
	}
	// 4. Cycle N+1 assumes W again; its write waits behind the recheck.
	second := assumeQueued(t, tr)
	if second == first {
		t.Fatal("the second admission has the first one's id")
	}
	// 5. The read returns V2: it must not touch admission #2.
	tr.Resolve(read, first)
	wantCharged(t, tr, true, "after the late read")
	if got := tr.Phase("ns/w"); got != "assumed" {
		t.Fatalf("after the late read the second admission is %q, want assumed", got)
	}
	// 6. Write #2 lands on V2, then the watch shows it.
	tr.Landed("ns/w", second, "3")
	wantCharged(t, tr, true, "landed")
	tr.Observe(at("3", true))
	wantCharged(t, tr, true, "reserved")
	if got := tr.Phase("ns/w"); got != "" {
		t.Fatalf("once the watch showed the reservation the admission is %q", got)
	}
	// A read that found nothing, as late, does not forget it either.
	tr.Gone("ns/w", first)
	wantCharged(t, tr, true, "after a late not-found")
}

// Refused gives the charge back in the same hold of the lock as it moves
// the admission: at the only point where another operation may run before
// Refused returns, the watch settles the workload and a cycle admits it
// again, and that admission keeps its charge.
func TestRefusedGivesBackOnlyItsOwnCharge(t *testing.T) {
	tr := NewTracker()
	tr.Observe(at("1", false))
	first := assumeQueued(t, tr)
	var second AdmissionID
	tr.interleave = func(op string) {
		tr.interleave = nil
		tr.Observe(at("2", false))
		second = assumeQueued(t, tr)
	}
	tr.Refused("ns/w", first)
	if second == 0 {
		t.Fatal("the hook did not run")
	}
	wantCharged(t, tr, true, "the second admission, after the first one's refusal returned")
	if got := tr.Phase("ns/w"); got != "assumed" {
		t.Fatalf("the second admission is %q, want assumed", got)
	}
	// The first admission's outcome filed again (a retried answer) changes
	// nothing either.
	tr.Refused("ns/w", first)
	wantCharged(t, tr, true, "after a repeated refusal of the first admission")
}

// A read that settles an uncertain admission, returned after the watch
// showed the reservation and then the workload finished, must not charge
// the finished workload again: that quota would never come back.
func TestLateReadDoesNotChargeAFinishedWorkload(t *testing.T) {
	tr := NewTracker()
	tr.Observe(at("1", false))
	id := assumeQueued(t, tr)
	tr.Uncertain("ns/w", id, "1")
	read := at("2", true) // the write did land; the read sees it
	tr.Observe(at("2", true))
	tr.Observe(finishedAt("3"))
	wantCharged(t, tr, false, "finished")
	tr.Resolve(read, id)
	wantCharged(t, tr, false, "after the late read of the reserved version")

	// The same late version from any other path (an informer that lags a
	// fresh list) is older than what was settled, and is not applied.
	tr.Observe(at("2", true))
	wantCharged(t, tr, false, "after a late delivery of the reserved version")
}

// The watch may deliver the admission's own version before the write's
// answer: once the answer comes, the admission is settled by what the
// watch showed, and blockAdmission does not wait for an event that came
// already.
func TestWatchBeforeTheAnswerSettlesOnTheAnswer(t *testing.T) {
	t.Run("landed", func(t *testing.T) {
		tr := NewTracker()
		tr.Observe(at("1", false))
		id := assumeQueued(t, tr)
		tr.Observe(at("2", true))
		if got := tr.Phase("ns/w"); got != "assumed" {
			t.Fatalf("before the answer the admission is %q, want assumed", got)
		}
		tr.Landed("ns/w", id, "2")
		if got := tr.Phase("ns/w"); got != "" {
			t.Fatalf("after the answer the admission is %q: the watch's event came already", got)
		}
		if key, blocked := tr.AdmissionBlocked(); blocked && key != "ns/w" {
			t.Fatalf("blocked by %s", key)
		}
		wantCharged(t, tr, true, "reserved")
	})
	t.Run("refused", func(t *testing.T) {
		tr := NewTracker()
		tr.Observe(at("1", false))
		id := assumeQueued(t, tr)
		// Someone else's write, the reason for the conflict.
		tr.Observe(at("2", false))
		tr.Refused("ns/w", id)
		if got := tr.Phase("ns/w"); got != "" {
			t.Fatalf("after the refusal the admission is %q; the newer version was shown already", got)
		}
		wantCharged(t, tr, false, "refused")
		if len(tr.Queues.Pending()) != 1 {
			t.Fatal("the refused workload is not queued again")
		}
	})
	t.Run("uncertain", func(t *testing.T) {
		tr := NewTracker()
		tr.Observe(at("1", false))
		id := assumeQueued(t, tr)
		tr.Observe(at("2", true))
		tr.Uncertain("ns/w", id, "1")
		if got := tr.Phase("ns/w"); got != "" {
			t.Fatalf("after the lost answer the admission is %q; the watch showed it landed", got)
		}
		wantCharged(t, tr, true, "reserved")
	})
}

// Two pending verdicts back to back, the second on top of the first: the
// watch showing the middle version must not drop what is known, or an
// admission decided on that version is sent on it and certain to conflict.
func TestChainedOwnWritesKeepEveryVersionOfTheChain(t *testing.T) {
	o := newOwnWrites()
	o.record("ns/w", "1", versionOf("2", waiting))
	o.record("ns/w", "2", versionOf("3", waiting))
	o.seen(versionOf("2"))
	middle := &workload.Info{Key: "ns/w", Obj: versionOf("2")}
	if got := o.latest(middle); got.ResourceVersion != "3" {
		t.Fatalf("a decision on the middle version is sent on %s, want 3 (the version the API holds)", got.ResourceVersion)
	}
	first := &workload.Info{Key: "ns/w", Obj: versionOf("1")}
	if got := o.latest(first); got.ResourceVersion != "3" {
		t.Fatalf("a decision on the first version is sent on %s, want 3", got.ResourceVersion)
	}
	o.seen(versionOf("4"))
	if got := o.latest(middle); got.ResourceVersion != "2" {
		t.Fatalf("after the watch moved past the chain, latest = %s, want the info's own 2", got.ResourceVersion)
	}
}

// A new leader charges what the API holds, not what its informer shows: the
// old leader's last admission, written just before it stopped, may not have
// reached the informer yet. Its room is not admitted again, and the
// informer delivering the version from before the admission late does not
// give the charge back.
func TestNewLeaderChargesAdmissionsItsInformerHasNotShown(t *testing.T) {
	w := newWorld(t, clusterQueue("1", nil))
	old := pendingWorkload("w", 0)
	if err := w.client.Create(w.ctx, old); err != nil {
		t.Fatal(err)
	}
	before := old.DeepCopy()
	// The old leader's admission lands.
	workload.SetReserved(old, reservedWorkload("w", 0).Status.Admission, nil, time.Unix(2000, 0))
	if err := w.client.Status().Update(w.ctx, old); err != nil {
		t.Fatal(err)
	}
	if err := w.client.Create(w.ctx, pendingWorkload("x", 0)); err != nil {
		t.Fatal(err)
	}
	// The new leader's informer has seen neither.
	w.admitter.Client = newEmptyClient()
	if err := w.admitter.rebuild(w.ctx); err != nil {
		t.Fatal(err)
	}
	wantCharged(t, w.tracker, true, "after the rebuild")
	w.tracker.Observe(before)
	wantCharged(t, w.tracker, true, "after the informer delivered the version from before the admission")
	w.cycleAndSettle()
	if got := w.get("x"); workload.HasQuotaReservation(got) {
		t.Fatal("the new leader admitted x into the room the old leader's admission holds")
	}
}

// newEmptyClient is an informer that has seen nothing yet.
func newEmptyClient() client.Client {
	return fake.NewClientBuilder().WithScheme(scheme.Scheme).WithStatusSubresource(&kueue.Workload{}).Build()
}

// A Workload deleted and created again under the same name while the
// recheck of a refused admission of the first one is on its way: the read
// answers for either object, or for none, and must not settle the new
// one's admission.
func TestRecheckOfADeletedWorkloadLeavesItsNamesakeAlone(t *testing.T) {
	for _, tc := range []struct {
		name string
		read func(tr *Tracker, first AdmissionID)
	}{
		{"the read finds the old object, reserved", func(tr *Tracker, first AdmissionID) { tr.Resolve(at("3", true), first) }},
		{"the read finds the new object, pending", func(tr *Tracker, first AdmissionID) { tr.Resolve(at("5", false), first) }},
		{"the read finds nothing", func(tr *Tracker, first AdmissionID) { tr.Gone("ns/w", first) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := NewTracker()
			tr.Observe(at("1", false))
			first := assumeQueued(t, tr)
			tr.Refused("ns/w", first) // the recheck is queued
			tr.Deleted("ns/w", "4")   // the watch: deleted
			renewed := at("5", false)
			renewed.UID = "second-object"
			tr.Observe(renewed) // created again, same name
			second := assumeQueued(t, tr)
			tc.read(tr, first)
			wantCharged(t, tr, true, "the new object's admission, after the old one's recheck")
			if got := tr.Phase("ns/w"); got != "assumed" {
				t.Fatalf("the new object's admission is %q, want assumed", got)
			}
			tr.Landed("ns/w", second, "6")
			tr.Observe(at("6", true))
			wantCharged(t, tr, true, "reserved")
			if got := tr.Phase("ns/w"); got != "" {
				t.Fatalf("once the watch showed the reservation the admission is %q", got)
			}
		})
	}
}

// The watch delivers a Workload's deletion after a read already found the
// one created again under its name and a cycle admitted that one: the
// deletion is of an older version and leaves the new admission alone.
func TestDeletionSeenAfterTheNamesakeWasReadLeavesItAlone(t *testing.T) {
	tr := NewTracker()
	tr.Observe(at("1", false))
	first := assumeQueued(t, tr)
	tr.Refused("ns/w", first)
	tr.Resolve(at("5", false), first) // the recheck read the new Workload
	second := assumeQueued(t, tr)
	tr.Deleted("ns/w", "2") // the first one's deletion, delivered late
	wantCharged(t, tr, true, "the new Workload's admission, after the old one's deletion")
	tr.Landed("ns/w", second, "6")
	tr.Observe(at("6", true))
	wantCharged(t, tr, true, "reserved")
	tr.Deleted("ns/w", "7") // the new one's own deletion
	wantCharged(t, tr, false, "deleted")
}
