package queue

import (
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/workload"
)

func TestPositionsFollowTheServingOrder(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	wl := func(name, lq string, priority int32, at int) *workload.Info {
		return &workload.Info{Key: "ns/" + name, Namespace: "ns", Name: name, LocalQueue: lq, Priority: priority, QueueTime: t0.Add(time.Duration(at) * time.Second)}
	}
	got := Positions([]*workload.Info{
		wl("late-low", "a", 0, 9), wl("early-mid", "a", 5, 1), wl("high", "b", 10, 5), wl("late-mid", "a", 5, 2),
		wl("tie-y", "b", 5, 1), // same priority and time as early-mid: the key decides
	})
	want := []struct {
		name       string
		inCQ, inLQ int
	}{{"high", 0, 0}, {"early-mid", 1, 0}, {"tie-y", 2, 1}, {"late-mid", 3, 1}, {"late-low", 4, 2}}
	if len(got) != len(want) {
		t.Fatalf("got %d positions, want %d", len(got), len(want))
	}
	for i, w := range want {
		if p := got[i]; p.Info.Name != w.name || p.InClusterQueue != w.inCQ || p.InLocalQueue != w.inLQ {
			t.Errorf("position %d: got %s (%d, %d), want %s (%d, %d)", i, p.Info.Name, p.InClusterQueue, p.InLocalQueue, w.name, w.inCQ, w.inLQ)
		}
	}
}
