package queue

import (
	"sort"
	"testing"
	"time"

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
	m.Park(a, m.Requeues())
	if got := m.Pending(); len(got) != 1 || got[0] != b {
		t.Fatalf("pending after parking a: %v", got)
	}
	if len(m.All()) != 2 {
		t.Fatal("a parked workload still waits")
	}
	// Parking an outdated version does nothing.
	b2 := info("ns/b", 5, 0)
	m.AddOrUpdate(b2)
	m.Park(b, m.Requeues())
	if got := m.Pending(); len(got) != 1 || got[0] != b2 {
		t.Fatalf("a stale park moved the new version: %v", got)
	}
	m.RequeueParked(func(i *workload.Info) bool { return i.Key == "ns/other" })
	if len(m.Pending()) != 1 {
		t.Fatal("requeue with a filter moved the wrong workload")
	}
	select {
	case <-m.Wake():
	default:
		t.Fatal("a requeue that moved nothing must still wake the scheduler (StrictFIFO heads are never parked)")
	}
	m.RequeueParked(nil)
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
	m.RequeueParked(func(i *workload.Info) bool { return i.Key == "ns/a" })
	m.Park(a, seen)
	m.Park(b, seen)
	if got := m.Pending(); len(got) != 1 || got[0] != a {
		t.Fatalf("pending %v: a was woken during the cycle and must stay pending; b was not and parks", got)
	}
	// The next cycle's verdict parks it.
	m.Park(a, m.Requeues())
	if len(m.Pending()) != 0 {
		t.Fatal("a verdict from after the requeue did not park")
	}
}
