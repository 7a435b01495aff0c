package apply

import (
	"reflect"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestQueueStatusWritesStalestFirstWithinBudget(t *testing.T) {
	w := &QueueStatusWriter{MaxWritesPerPeriod: 2, Clock: clocktesting.NewFakeClock(time.Unix(400, 0)), lastWritten: map[string]time.Time{
		"cq/a": time.Unix(300, 0),
		"cq/b": time.Unix(100, 0),
		"cq/c": time.Unix(200, 0),
		// cq/d was never written: it goes first.
	}}
	var written []string
	update := func(key string) statusUpdate {
		return statusUpdate{key: key, write: func() { written = append(written, key) }}
	}
	w.writeStalestFirst([]statusUpdate{update("cq/a"), update("cq/b"), update("cq/c"), update("cq/d")})
	if want := []string{"cq/d", "cq/b"}; !reflect.DeepEqual(written, want) {
		t.Fatalf("first period wrote %v, want %v", written, want)
	}
	written = nil
	w.writeStalestFirst([]statusUpdate{update("cq/a"), update("cq/b"), update("cq/c"), update("cq/d")})
	if want := []string{"cq/c", "cq/a"}; !reflect.DeepEqual(written, want) {
		t.Fatalf("second period wrote %v, want the ones left waiting %v", written, want)
	}
	written = nil
	w.MaxWritesPerPeriod = 0
	w.writeStalestFirst([]statusUpdate{update("cq/a"), update("cq/b"), update("cq/c")})
	if len(written) != 3 {
		t.Fatalf("without a budget wrote %v, want all three", written)
	}
}

func TestQueueStatusOfABusyQueueWaitsItsIntervalUnlessItDrained(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(400, 0))
	w := &QueueStatusWriter{MinInterval: 10 * time.Second, Clock: clk}
	var written []string
	update := func(key string, drained bool) statusUpdate {
		return statusUpdate{key: key, drained: drained, write: func() { written = append(written, key) }}
	}
	w.writeStalestFirst([]statusUpdate{update("cq/busy", false), update("cq/draining", false)})
	clk.Step(time.Second)
	written = nil
	w.writeStalestFirst([]statusUpdate{update("cq/busy", false), update("cq/draining", true), update("cq/new", false)})
	if want := []string{"cq/new", "cq/draining"}; !reflect.DeepEqual(written, want) {
		t.Fatalf("a second later wrote %v, want %v: a queue written a second ago waits unless it drained", written, want)
	}
	clk.Step(10 * time.Second)
	written = nil
	w.writeStalestFirst([]statusUpdate{update("cq/busy", false)})
	if want := []string{"cq/busy"}; !reflect.DeepEqual(written, want) {
		t.Fatalf("after the interval wrote %v, want %v", written, want)
	}
}
