package controller

import (
	"testing"

	"github.com/sluicehq/sluice/internal/scheduler"
	"github.com/sluicehq/sluice/internal/workload"
)

func decisionFor(key, message string) scheduler.Decision {
	return scheduler.Decision{Info: &workload.Info{Key: key}, Message: message}
}

type taken struct {
	key, message string
	admission    bool
}

// drain takes every write the queue offers without blocking: it stops when
// the queue would wait (closed first so that next returns).
func drain(q *writeQueue, completeVerdicts bool) []taken {
	q.close()
	var out []taken
	for {
		d, admission, ok := q.next()
		if !ok {
			return out
		}
		out = append(out, taken{d.Info.Key, d.Message, admission})
		if completeVerdicts {
			q.written(d, admission)
		}
	}
}

func TestWriteQueueAdmissionsFirst(t *testing.T) {
	q := newWriteQueue(4)
	q.verdict(decisionFor("ns/a", "waits"))
	q.admit(decisionFor("ns/b", ""))
	q.verdict(decisionFor("ns/c", "waits"))
	q.admit(decisionFor("ns/d", ""))
	d, admission, ok := q.next()
	if !ok || !admission || d.Info.Key != "ns/b" {
		t.Fatalf("first write = %s (admission %v), want the admission of ns/b", d.Info.Key, admission)
	}
	d, admission, _ = q.next()
	if !admission || d.Info.Key != "ns/d" {
		t.Fatalf("second write = %s (admission %v), want the admission of ns/d", d.Info.Key, admission)
	}
	d, admission, _ = q.next()
	if admission || d.Info.Key != "ns/a" {
		t.Fatalf("third write = %s (admission %v), want the verdict of ns/a", d.Info.Key, admission)
	}
}

func TestWriteQueueVerdictsCoalesce(t *testing.T) {
	q := newWriteQueue(4)
	q.verdict(decisionFor("ns/a", "available 1"))
	q.verdict(decisionFor("ns/b", "available 1"))
	q.verdict(decisionFor("ns/a", "available 2"))
	q.verdict(decisionFor("ns/c", "available 1"))
	q.admit(decisionFor("ns/c", ""))
	var got []taken
	for range 3 {
		d, admission, _ := q.next()
		got = append(got, taken{d.Info.Key, d.Message, admission})
	}
	if len(q.pending) != 0 {
		t.Errorf("verdicts left after the writes: %v (the one of the admitted ns/c must be dropped)", q.pending)
	}
	want := []taken{{"ns/c", "", true}, {"ns/a", "available 2", false}, {"ns/b", "available 1", false}}
	if len(got) != len(want) {
		t.Fatalf("writes = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("write %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestWriteQueueBoundsVerdictsInFlight(t *testing.T) {
	q := newWriteQueue(2)
	for _, key := range []string{"ns/a", "ns/b", "ns/c"} {
		q.verdict(decisionFor(key, "waits"))
	}
	first, _, _ := q.next()
	q.next()
	// Two verdicts in flight: a third must wait, an admission must not.
	q.admit(decisionFor("ns/x", ""))
	if d, admission, _ := q.next(); !admission || d.Info.Key != "ns/x" {
		t.Fatalf("with verdicts at the bound, next = %s (admission %v), want the admission", d.Info.Key, admission)
	}
	q.written(first, false)
	if d, admission, _ := q.next(); admission || d.Info.Key != "ns/c" {
		t.Fatalf("after a verdict completed, next = %s (admission %v), want the verdict of ns/c", d.Info.Key, admission)
	}
}

func TestWriteQueueCloseDrainsAdmissionsOnly(t *testing.T) {
	q := newWriteQueue(1)
	q.verdict(decisionFor("ns/a", "waits"))
	q.admit(decisionFor("ns/b", ""))
	got := drain(q, true)
	if len(got) != 1 || got[0].key != "ns/b" || !got[0].admission {
		t.Errorf("after close, writes = %+v, want only the admission of ns/b", got)
	}
}

// A workload's admission decided while its verdict is being written waits
// for that write: made at once, it would be refused as a conflict.
func TestWriteQueueOneWriteOfAWorkloadAtATime(t *testing.T) {
	q := newWriteQueue(4)
	q.verdict(decisionFor("ns/a", "waits for preempted workloads"))
	verdict, _, _ := q.next()
	q.admit(decisionFor("ns/a", ""))
	q.admit(decisionFor("ns/b", ""))
	if d, admission, _ := q.next(); !admission || d.Info.Key != "ns/b" {
		t.Fatalf("while ns/a is written, next = %s (admission %v), want the admission of ns/b", d.Info.Key, admission)
	}
	q.mu.Lock()
	d, _, found := q.take()
	q.mu.Unlock()
	if found {
		t.Fatalf("next would give %s while ns/a's verdict is still being written", d.Info.Key)
	}
	q.written(verdict, false)
	if d, admission, _ := q.next(); !admission || d.Info.Key != "ns/a" {
		t.Errorf("after the verdict was written, next = %s (admission %v), want ns/a's admission", d.Info.Key, admission)
	}
}
