package admission

import (
	"context"
	"testing"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// A Workload deleted and at once created again under its name is counted
// once, end to end on a real API server: with room for one, the new one
// and a rival are never admitted together, and each runs in turn. (The
// interleavings where the watch delivers the old one's deletion late, after
// a read of the new one, are forced in internal/apply's unit tests; here
// the watch is in order, so this guards the whole path, not that race.)
func TestWorkloadRecreatedUnderItsNameIsCountedOnce(t *testing.T) {
	ns, rf, cq := namespace(t, nil), cluster.Unique("rf"), cluster.Unique("cq")
	cluster.MustCreate(t, flavor(rf, nil), clusterQueue(cq, "", fq{flavor: rf, nominal: "1"}), localQueue(ns, "lq", cq))
	for round := range 5 {
		same := newWorkload(ns, "same", "lq", 0, 1, "1")
		cluster.MustCreate(t, same)
		waitAdmitted(t, same)
		rival := newWorkload(ns, "rival", "lq", 0, 1, "1")
		cluster.MustCreate(t, rival)
		if err := cluster.Client.Delete(context.Background(), same); err != nil {
			t.Fatalf("round %d: deleting %s: %v", round, same.Name, err)
		}
		again := newWorkload(ns, "same", "lq", 0, 1, "1")
		framework.Eventually(t, "the name to be free for the new "+again.Name, func(ctx context.Context) (bool, error) {
			err := cluster.Client.Create(ctx, again)
			return err == nil, err
		})
		// Each in turn: one holds the room; once a cycle has passed
		// (probe), the other still waits; finished, it lets the other in.
		both := []*kueue.Workload{again, rival}
		var first []string
		framework.Eventually(t, "one of the two to be admitted", func(ctx context.Context) (bool, error) {
			first = admittedNow(t, both...)
			return len(first) > 0, nil
		})
		probe(t)
		if got := admittedNow(t, both...); len(got) != 1 {
			t.Fatalf("round %d: admitted together %v, with room for one", round, got)
		}
		checkInvariant(t)
		holder, waiter := again, rival
		if first[0] == rival.Name {
			holder, waiter = rival, again
		}
		finish(t, holder)
		waitAdmitted(t, waiter)
		checkInvariant(t)
		cluster.DeleteWorkloads(t, ns)
	}
}

func checkInvariant(t *testing.T) {
	t.Helper()
	if err := framework.CheckQuotaInvariant(context.Background(), cluster.Client); err != nil {
		t.Fatal(err)
	}
}
