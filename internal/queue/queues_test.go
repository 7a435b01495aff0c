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

// Quota freed in one cohort requeues the workloads parked in its
// ClusterQueues only, and the index follows a parked workload's updates.
func TestRequeueClusterQueuesMovesOnlyTheirs(t *testing.T) {
	m := New()
	in := map[string]string{"ns/a": "cq-a", "ns/b": "cq-b", "ns/c": "cq-a"}
	for key, cq := range in {
		i := info(key, 0, 0)
		m.AddOrUpdate(i)
		m.Park(i, cq, m.Requeues())
	}
	// A status-only update keeps c parked, in its queue's index.
	c2 := info("ns/c", 0, 0)
	c2.Obj = &kueue.Workload{}
	m.parked["ns/c"].info.Obj = &kueue.Workload{}
	m.AddOrUpdate(c2)
	if len(m.Pending()) != 0 {
		t.Fatal("a status-only update requeued a parked workload")
	}
	m.RequeueClusterQueues(map[string]bool{"cq-a": true})
	got := map[string]bool{}
	for _, i := range m.Pending() {
		got[i.Key] = true
	}
	if len(got) != 2 || !got["ns/a"] || !got["ns/c"] {
		t.Fatalf("pending %v, want a and c (parked in cq-a), b left parked", got)
	}
	if p := m.Pending(); (p[0].Key == "ns/c" && p[0] != c2) || (p[1].Key == "ns/c" && p[1] != c2) {
		t.Fatal("the requeued c is not its newest version")
	}
	m.Delete("ns/b")
	m.RequeueAll()
	if len(m.Pending()) != 2 || len(m.All()) != 2 {
		t.Fatal("a deleted parked workload came back")
	}
}
