package apply

import (
	"context"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
)

func newTestDispatcher(workers, background int) (*Dispatcher, *clocktesting.FakeClock) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	return NewDispatcher(DispatcherOptions{Workers: workers, BackgroundWorkers: background,
		BaseBackoff: time.Second, MaxBackoff: time.Minute, Clock: clk}), clk
}

func write(object, kind string, class Class) Write {
	return Write{Object: object, Kind: kind, Class: class, Run: func(context.Context) Outcome { return Done }}
}

// tryNext is next without blocking: ok false when nothing may be written now.
func tryNext(d *Dispatcher) (string, Write, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.takeNext()
}

// takeAll takes and completes every write that may be made now, in order.
func takeAll(d *Dispatcher) []string {
	var out []string
	for {
		key, w, ok := tryNext(d)
		if !ok {
			return out
		}
		out = append(out, key+":"+w.Kind)
		d.finish(key, w, Done)
	}
}

func TestDispatcherUrgentFirst(t *testing.T) {
	d, _ := newTestDispatcher(4, 1)
	d.Add(write("a", "pending", Background))
	d.Add(write("b", "admission", Urgent))
	d.Add(write("c", "pending", Background))
	d.Add(write("d", "preemption", Urgent))
	got := takeAll(d)
	want := []string{"b:admission", "d:preemption", "a:pending", "c:pending"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
	if d.Len() != 0 {
		t.Fatalf("%d objects left after every write was made", d.Len())
	}
}

func TestDispatcherMergesIntents(t *testing.T) {
	d, _ := newTestDispatcher(4, 4)
	first := write("a", "pending", Background)
	first.Run = nil // replaced before it runs
	d.Add(first)
	d.Add(write("b", "pending", Background))
	d.Add(write("a", "pending", Background))
	d.Add(write("c", "pending", Background))
	d.Add(write("c", "admission", Urgent)) // drops c's verdict
	d.Add(write("c", "pending", Background))
	got := takeAll(d)
	want := []string{"c:admission", "a:pending", "b:pending"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("writes = %v, want %v (a newer verdict replaces a queued one, an admission drops it)", got, want)
	}
}

func TestDispatcherOneWriteOfAnObjectAtATime(t *testing.T) {
	d, _ := newTestDispatcher(4, 4)
	d.Add(write("a", "admission", Urgent))
	key, w, ok := tryNext(d)
	if !ok || key != "a" {
		t.Fatalf("first write = %q, want a", key)
	}
	d.Add(write("a", "preemption", Urgent))
	d.Add(write("b", "admission", Urgent))
	if k, _, _ := tryNext(d); k != "b" {
		t.Fatalf("while a is written, next = %q, want b", k)
	}
	if k, _, ok := tryNext(d); ok {
		t.Fatalf("a second write of a was offered (%q) while its first is in flight", k)
	}
	d.finish(key, w, Done)
	if k, w, ok := tryNext(d); !ok || k != "a" || w.Kind != "preemption" {
		t.Fatalf("after a's admission, next = %q %q, want a's preemption", k, w.Kind)
	}
}

func TestDispatcherBoundsBackgroundWrites(t *testing.T) {
	d, _ := newTestDispatcher(4, 1)
	d.Add(write("a", "pending", Background))
	d.Add(write("b", "pending", Background))
	key, w, _ := tryNext(d)
	if _, _, ok := tryNext(d); ok {
		t.Fatal("a second background write ran beyond the bound of one")
	}
	d.Add(write("c", "admission", Urgent))
	if k, _, ok := tryNext(d); !ok || k != "c" {
		t.Fatalf("an urgent write waited behind the background bound: got %q", k)
	}
	d.finish(key, w, Done)
	if k, _, ok := tryNext(d); !ok || k != "b" {
		t.Fatalf("after a's verdict, next = %q, want b", k)
	}
}

func TestDispatcherBacksOffPerObject(t *testing.T) {
	d, clk := newTestDispatcher(4, 4)
	d.Add(write("a", "preemption", Urgent))
	d.Add(write("b", "preemption", Urgent))
	key, w, _ := tryNext(d)
	d.finish(key, w, Retry) // a: 1s
	if k, _, ok := tryNext(d); !ok || k != "b" {
		t.Fatalf("a failing object held back another: next = %q", k)
	}
	if _, _, ok := tryNext(d); ok {
		t.Fatal("a retried before its backoff")
	}
	clk.Step(time.Second)
	key, w, ok := tryNext(d)
	if !ok || key != "a" || w.Kind != "preemption" {
		t.Fatalf("after 1s, next = %q %q, want a's preemption again", key, w.Kind)
	}
	d.finish(key, w, Retry) // a: 2s
	clk.Step(time.Second)
	if _, _, ok := tryNext(d); ok {
		t.Fatal("the second backoff was not longer than the first")
	}
	clk.Step(time.Second)
	key, w, ok = tryNext(d)
	if !ok || key != "a" {
		t.Fatal("a was not retried after its second backoff")
	}
	d.Add(write("a", "eviction", Urgent)) // queued behind the write in flight
	d.finish(key, w, Done)
	key, w, ok = tryNext(d)
	if !ok || key != "a" || w.Kind != "eviction" {
		t.Fatalf("after a's success, next = %q %q, want a's eviction", key, w.Kind)
	}
	d.finish(key, w, Retry)
	clk.Step(time.Second)
	if _, _, ok := tryNext(d); !ok {
		t.Fatal("a success did not reset a's backoff: the next failure waited beyond the base")
	}
}

func TestDispatcherRetryKeepsANewerIntent(t *testing.T) {
	d, clk := newTestDispatcher(4, 4)
	d.Add(write("a", "pending", Background))
	key, w, _ := tryNext(d)
	d.Add(write("a", "pending", Background))
	d.finish(key, w, Retry)
	clk.Step(time.Second)
	got := takeAll(d)
	if len(got) != 1 {
		t.Fatalf("writes after a failure replaced by a newer intent = %v, want the newer one alone", got)
	}
}

type fence struct {
	mu   sync.Mutex
	open bool
}

func (f *fence) WritableUntil() (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return time.Time{}, f.open
}

func (f *fence) set(open bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.open = open
}

func TestDispatcherWritesOnlyWithinTheFence(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	f := &fence{}
	d := NewDispatcher(DispatcherOptions{Workers: 2, BackgroundWorkers: 1, BaseBackoff: time.Second, Clock: clk, Fence: f})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d.Start(ctx)
	defer d.Stop(cancel, time.Minute)
	var mu sync.Mutex
	ran := 0
	d.Add(Write{Object: "a", Kind: "admission", Class: Urgent, Run: func(context.Context) Outcome {
		mu.Lock()
		defer mu.Unlock()
		ran++
		return Done
	}})
	// Fenced: the write goes back to wait for the backoff timer.
	waitFor(t, func() bool { return clk.HasWaiters() })
	mu.Lock()
	if ran != 0 {
		t.Fatal("a write ran while the fence was closed")
	}
	mu.Unlock()
	f.set(true)
	clk.Step(time.Second)
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return ran == 1 })
}

func TestDispatcherStopDrainsUrgentWrites(t *testing.T) {
	d, _ := newTestDispatcher(1, 1)
	var mu sync.Mutex
	var ran []string
	record := func(name string) func(context.Context) Outcome {
		return func(context.Context) Outcome {
			mu.Lock()
			defer mu.Unlock()
			ran = append(ran, name)
			return Done
		}
	}
	d.Add(Write{Object: "a", Kind: "pending", Class: Background, Run: record("a:pending")})
	d.Add(Write{Object: "b", Kind: "admission", Class: Urgent, Run: record("b:admission")})
	d.Add(Write{Object: "c", Kind: "admission", Class: Urgent, Run: record("c:admission")})
	ctx, cancel := context.WithCancel(context.Background())
	d.mu.Lock()
	d.stopping = true // stop before the workers start: they drain, then return
	d.mu.Unlock()
	d.Start(ctx)
	d.Stop(cancel, time.Minute)
	if want := []string{"b:admission", "c:admission"}; !reflect.DeepEqual(ran, want) {
		t.Fatalf("on stop wrote %v, want the urgent writes %v", ran, want)
	}
	d.Add(write("d", "admission", Urgent))
	if d.Len() != 0 {
		t.Fatal("a stopped dispatcher queued a write")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(time.Millisecond)
	}
}

// slowArmingClock holds AfterFunc until released, as a preempted goroutine
// would between deciding a backoff and arming its timer.
type slowArmingClock struct {
	*clocktesting.FakeClock
	release chan struct{}
}

func (c *slowArmingClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	<-c.release
	return c.FakeClock.AfterFunc(d, f)
}

// A failed write's backoff timer is armed after the dispatcher's lock is
// released; until it is, the dispatcher is not idle, or a caller stepping
// the clock once idle would step past a timer not yet armed (seen as a
// rare CI failure of TestRefusedAdmissionAndFailedReadDoNotStrand).
func TestDispatcherIsNotIdleUntilABackoffIsArmed(t *testing.T) {
	clk := &slowArmingClock{FakeClock: clocktesting.NewFakeClock(time.Unix(1000, 0)), release: make(chan struct{})}
	d := NewDispatcher(DispatcherOptions{Workers: 1, BackgroundWorkers: 1, BaseBackoff: time.Second, Clock: clk})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d.Start(ctx)
	defer d.Stop(cancel, time.Minute)
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(clk.release) }) }
	defer release() // before Stop waits for the worker arming the timer
	var tries atomic.Int32
	d.Add(Write{Object: "a", Kind: "admission", Class: Urgent, Run: func(context.Context) Outcome {
		if tries.Add(1) == 1 {
			return Retry
		}
		return Done
	}})
	waitFor(t, func() bool { return tries.Load() == 1 })
	if d.Idle() {
		t.Fatal("idle while a failed write's backoff timer is not armed yet")
	}
	release()
	waitFor(t, d.Idle)
	clk.Step(time.Second)
	waitFor(t, func() bool { return tries.Load() == 2 && d.Idle() })
}
