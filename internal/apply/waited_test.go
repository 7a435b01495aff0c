package apply

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// doAsync runs Do in the background and returns where its result arrives.
func doAsync(d *Dispatcher, object, kind string, write func(context.Context) error) <-chan error {
	result := make(chan error, 1)
	go func() { result <- d.Do(context.Background(), object, kind, write) }()
	return result
}

// waitQueuedWrites waits until n writes of object are queued.
func waitQueuedWrites(t *testing.T, d *Dispatcher, object string, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		d.mu.Lock()
		queued := 0
		if o := d.objects[object]; o != nil {
			queued = len(o.writes)
		}
		d.mu.Unlock()
		if queued >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d writes of %s queued, want %d", queued, object, n)
		}
		time.Sleep(time.Millisecond) // polling the queue, not synchronising on it
	}
}

func TestDoWaitsBehindTheObjectsWriteInFlight(t *testing.T) {
	d, _ := newTestDispatcher(4, 1)
	d.Add(write("wl", "admission", Urgent))
	admission, w, _ := tryNext(d) // in flight
	var order []string
	result := doAsync(d, "wl", "finish", func(context.Context) error { order = append(order, "finish"); return nil })
	waitQueuedWrites(t, d, "wl", 1)
	if k, _, ok := tryNext(d); ok {
		t.Fatalf("the finish write was offered (%q) while the admission of its Workload is in flight", k)
	}
	order = append(order, "admission")
	d.finish(admission, w, Done)
	key, next, ok := tryNext(d)
	if !ok || key != "wl" || next.Kind != "finish" {
		t.Fatalf("after the admission, next = %q %q, want wl's finish", key, next.Kind)
	}
	d.finish(key, next, next.Run(context.Background()))
	if err := <-result; err != nil {
		t.Fatalf("Do = %v, want its write's result", err)
	}
	if len(order) != 2 || order[0] != "admission" {
		t.Fatalf("order = %v, want the admission first", order)
	}
}

func TestDoIsNeverMergedAway(t *testing.T) {
	d, _ := newTestDispatcher(4, 1)
	d.Add(write("wl", "admission", Urgent))
	inFlight, w, _ := tryNext(d)
	first := doAsync(d, "wl", "pods-ready", func(context.Context) error { return nil })
	waitQueuedWrites(t, d, "wl", 1)
	second := doAsync(d, "wl", "pods-ready", func(context.Context) error { return errors.New("second") })
	waitQueuedWrites(t, d, "wl", 2)
	d.Add(write("wl", "pods-ready", Urgent)) // a queued intent of the same kind
	waitQueuedWrites(t, d, "wl", 3)
	d.finish(inFlight, w, Done)
	for range 3 {
		key, next, ok := tryNext(d)
		if !ok {
			t.Fatal("a queued write of wl was not offered")
		}
		d.finish(key, next, next.Run(context.Background()))
	}
	if err := <-first; err != nil {
		t.Fatalf("the first Do = %v, want it written", err)
	}
	if err := <-second; err == nil || err.Error() != "second" {
		t.Fatalf("the second Do = %v, want its own write's result", err)
	}
}

func TestDoReportsAWriteTheStopDropped(t *testing.T) {
	d, _ := newTestDispatcher(1, 1)
	result := doAsync(d, "wl", "finish", func(context.Context) error { return nil })
	waitQueuedWrites(t, d, "wl", 1)
	d.Stop(func() {}, 0) // never started: nothing is written
	if err := <-result; !errors.Is(err, ErrNotWritten) {
		t.Fatalf("Do = %v, want ErrNotWritten", err)
	}
	if err := d.Do(context.Background(), "wl", "finish", func(context.Context) error { return nil }); !errors.Is(err, ErrNotWritten) {
		t.Fatalf("Do after Stop = %v, want ErrNotWritten", err)
	}
}

func TestDoGivesUpWithItsContext(t *testing.T) {
	d, _ := newTestDispatcher(1, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := d.Do(ctx, "wl", "finish", func(context.Context) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("Do = %v, want the context's error", err)
	}
}

// A reconciler's write does not make the Workload's pending verdict moot,
// as an admission does: a verdict queued before it, or after it, is still
// written (the Verdicts remember it as sent, so a dropped one was lost).
func TestDoKeepsThePendingVerdict(t *testing.T) {
	for _, verdictFirst := range []bool{true, false} {
		d, _ := newTestDispatcher(4, 1)
		if verdictFirst {
			d.Add(write("wl", "pending", Background))
		}
		result := doAsync(d, "wl", "reclaimable-pods", func(context.Context) error { return nil })
		waitQueuedWrites(t, d, "wl", map[bool]int{true: 2, false: 1}[verdictFirst])
		if !verdictFirst {
			d.Add(write("wl", "pending", Background))
		}
		var kinds []string
		for {
			key, w, ok := tryNext(d)
			if !ok {
				break
			}
			kinds = append(kinds, w.Kind)
			d.finish(key, w, w.Run(context.Background()))
		}
		if err := <-result; err != nil {
			t.Fatalf("Do = %v", err)
		}
		if len(kinds) != 2 || !slices.Contains(kinds, "pending") {
			t.Fatalf("verdict first %v: writes made %v, want the reconciler's and the pending verdict", verdictFirst, kinds)
		}
	}
}
