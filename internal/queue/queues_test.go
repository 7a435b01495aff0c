package queue

import (
	"sort"
	"testing"
	"time"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/workload"
)

func info(key string, priority int32, queued int) *workload.Info {
	return &workload.Info{Key: key, Priority: priority, QueueTime: time.Unix(int64(queued), 0)}
}

func TestLess(t *testing.T) {
	list := []*workload.Info{
		info("ns/d", 0, 1), info("ns/c", 10, 5), info("ns/b", 10, 2), info("ns/a", 0, 1), info("ns/e", -1, 0),
	}
	sort.Slice(list, func(i, j int) bool { return Less(list[i], list[j]) })
	want := []string{"ns/b", "ns/c", "ns/a", "ns/d", "ns/e"}
	for i, w := range want {
		if list[i].Key != w {
			t.Fatalf("order %d = %s, want %s (higher priority, then earlier, then name)", i, list[i].Key, w)
		}
	}
}

func TestParkAndRequeue(t *testing.T) {
	m := New()
	a, b := info("ns/a", 0, 0), info("ns/b", 0, 0)
	m.AddOrUpdate(a)
	m.AddOrUpdate(b)
	<-m.Wake()
	m.Park(a, "cq", m.Requeues())
	if got := m.Pending(); len(got) != 1 || got[0] != b {
		t.Fatalf("pending after parking a: %v", got)
	}
	if len(m.All()) != 2 {
		t.Fatal("a parked workload still waits")
	}
	// Parking an outdated version does nothing.
	b2 := info("ns/b", 5, 0)
	m.AddOrUpdate(b2)
	m.Park(b, "cq", m.Requeues())
	if got := m.Pending(); len(got) != 1 || got[0] != b2 {
		t.Fatalf("a stale park moved the new version: %v", got)
	}
	m.RequeueClusterQueues(map[string]bool{"other-cq": true})
	m.RequeueKeys(map[string]bool{"ns/other": true})
	if len(m.Pending()) != 1 {
		t.Fatal("a requeue of another queue or workload moved a")
	}
	select {
	case <-m.Wake():
	default:
		t.Fatal("a requeue that moved nothing must still wake the scheduler (StrictFIFO heads are never parked)")
	}
	m.RequeueAll()
	if len(m.Pending()) != 2 {
		t.Fatal("requeue did not bring a back")
	}
	select {
	case <-m.Wake():
	default:
		t.Fatal("requeue did not wake the scheduler")
	}
	m.Delete("ns/a")
	for _, i := range m.All() {
		if i.Key == "ns/a" {
			t.Fatal("deleted workload still waits")
		}
	}
}

// A cycle evaluates a snapshot; a change that requeues (a flavor created,
// quota freed) may land while it runs and its workload is still pending.
// Parking it afterwards with the stale verdict would lose the change:
// nothing would requeue it again.
func TestParkAfterARequeueDuringTheCycleKeepsItPending(t *testing.T) {
	m := New()
	a, b := info("ns/a", 0, 0), info("ns/b", 0, 0)
	m.AddOrUpdate(a)
	m.AddOrUpdate(b)
	seen := m.Requeues() // the cycle's snapshot
	m.RequeueKeys(map[string]bool{"ns/a": true})
	m.Park(a, "cq", seen)
	m.Park(b, "cq", seen)
	if got := m.Pending(); len(got) != 1 || got[0] != a {
		t.Fatalf("pending %v: a was woken during the cycle and must stay pending; b was not and parks", got)
	}
	// The next cycle's verdict parks it.
	m.Park(a, "cq", m.Requeues())
	if len(m.Pending()) != 0 {
		t.Fatal("a verdict from after the requeue did not park")
	}

	// The same for quota freed in a ClusterQueue, and for everything.
	for _, requeue := range []func(){
		func() { m.RequeueClusterQueues(map[string]bool{"cq": true}) },
		m.RequeueAll,
	} {
		requeue() // both back to pending
		seen := m.Requeues()
		requeue()
		m.Park(a, "cq", seen)
		m.Park(b, "other-cq", seen)
		if got := m.Pending(); len(got) == 0 || (len(got) == 1 && got[0] != a) {
			t.Fatalf("pending %v after a requeue during the cycle", got)
		}
		m.Park(a, "cq", m.Requeues())
		m.Park(b, "other-cq", m.Requeues())
	}
}

// Quota freed in one cohort requeues, of the workloads parked in its
// ClusterQueues, the first of each shape in the queue's order; an admission
// requeues the next of its shape. The order follows a parked workload's
// updates.
func TestRequeueClusterQueuesMovesTheFirstOfEachShape(t *testing.T) {
	m := New()
	shaped := func(key string, priority int32, shape string) *workload.Info {
		i := info(key, priority, 0)
		i.Shape = shape
		i.Obj = &kueue.Workload{}
		return i
	}
	parkIn := map[*workload.Info]string{
		shaped("ns/small-1", 0, "1cpu"): "cq-a", shaped("ns/small-2", 0, "1cpu"): "cq-a",
		shaped("ns/small-urgent", 5, "1cpu"): "cq-a", shaped("ns/large", 0, "8cpu"): "cq-a",
		shaped("ns/other", 0, "1cpu"): "cq-b",
	}
	for i, cq := range parkIn {
		m.AddOrUpdate(i)
		m.Park(i, cq, m.Requeues())
	}
	pendingKeys := func() map[string]bool {
		got := map[string]bool{}
		for _, i := range m.Pending() {
			got[i.Key] = true
		}
		return got
	}
	// A status-only update keeps small-1 parked, in its place.
	m.AddOrUpdate(shaped("ns/small-1", 0, "1cpu"))
	if len(m.Pending()) != 0 {
		t.Fatal("a status-only update requeued a parked workload")
	}
	m.RequeueClusterQueues(map[string]bool{"cq-a": true})
	if got := pendingKeys(); len(got) != 2 || !got["ns/small-urgent"] || !got["ns/large"] {
		t.Fatalf("pending %v, want the first of each shape of cq-a: small-urgent and large", got)
	}
	m.Delete("ns/small-urgent") // admitted
	m.RequeueNext("cq-a", "1cpu")
	if got := pendingKeys(); len(got) != 3 || !got["ns/small-1"] || !got["ns/small-2"] || got["ns/other"] {
		t.Fatalf("pending %v, want the next two of its shape after an admission (small-1, small-2) and large; other (cq-b) still parked", got)
	}
	m.RequeueNext("cq-a", "1cpu") // nothing left of the shape: no-op
	if len(m.Pending()) != 3 {
		t.Fatal("a requeue of an empty shape moved something")
	}
	m.Delete("ns/other")
	m.RequeueAll()
	if len(m.Pending()) != 3 || len(m.All()) != 3 {
		t.Fatal("a deleted parked workload came back")
	}
}
