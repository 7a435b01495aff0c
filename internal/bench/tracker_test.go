package bench

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

func workloadIn(name string, conditions ...string) *kueue.Workload {
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	for _, c := range conditions {
		meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: c, Status: metav1.ConditionTrue, Reason: "Test"})
	}
	return wl
}

type finishCalls struct {
	mu    sync.Mutex
	names []string
	err   error
}

func (f *finishCalls) finish(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.names = append(f.names, name)
	return f.err
}

func (f *finishCalls) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.names)
}

func TestTrackerFinishesAfterRuntime(t *testing.T) {
	calls := &finishCalls{}
	tr := newTracker([]PlannedWorkload{{Name: "quick"}}, calls.finish)
	now := time.Now()
	tr.requested(0, now)
	tr.observe(t.Context(), workloadIn("quick"), now)
	if tr.admitted.Load() != 0 {
		t.Fatal("a pending Workload counted as admitted")
	}
	tr.observe(t.Context(), workloadIn("unknown", kueue.WorkloadAdmitted), now)
	tr.observe(t.Context(), workloadIn("quick", kueue.WorkloadQuotaReserved, kueue.WorkloadAdmitted), now)
	select {
	case <-tr.allFinished:
	case err := <-tr.failed:
		t.Fatal(err)
	case <-time.After(30 * time.Second):
		t.Fatal("the mimic did not finish the Workload")
	}
	run := tr.snapshot()[0]
	if run.admittedAt.IsZero() || run.finishedAt.IsZero() || run.finishLag < 0 || run.running {
		t.Errorf("run = %+v, want admitted and finished with a lag", run)
	}
	// The Finished version arriving through the watch changes nothing.
	tr.observe(t.Context(), workloadIn("quick", kueue.WorkloadAdmitted, kueue.WorkloadFinished), time.Now())
	if calls.count() != 1 || tr.finished.Load() != 1 || tr.admitted.Load() != 1 {
		t.Errorf("finish calls %v, finished %d, admitted %d; want 1 each", calls.names, tr.finished.Load(), tr.admitted.Load())
	}
}

func TestTrackerReRunsAnEvictedWorkload(t *testing.T) {
	calls := &finishCalls{}
	tr := newTracker([]PlannedWorkload{{Name: "long", Runtime: time.Hour}}, calls.finish)
	defer tr.stop()
	t0 := time.Now()
	tr.observe(t.Context(), workloadIn("long", kueue.WorkloadAdmitted), t0)
	tr.observe(t.Context(), workloadIn("long", kueue.WorkloadEvicted), t0.Add(time.Second))
	tr.observe(t.Context(), workloadIn("long", kueue.WorkloadAdmitted), t0.Add(3*time.Second))
	run := tr.snapshot()[0]
	if run.evictions != 1 || !run.running || run.generation != 2 {
		t.Errorf("run = %+v, want one eviction and a second run going", run)
	}
	if !run.admittedAt.Equal(t0) || tr.admitted.Load() != 1 {
		t.Errorf("time to admission must count the first admission once: admittedAt %v, admitted %d", run.admittedAt, tr.admitted.Load())
	}
	if len(run.inUse) != 2 || run.inUse[0].to.Sub(run.inUse[0].from) != time.Second || !run.inUse[1].to.IsZero() {
		t.Errorf("spans in use = %+v, want a closed 1 s span and an open one", run.inUse)
	}
	if calls.count() != 0 {
		t.Errorf("finish called %v before the runtime elapsed", calls.names)
	}
}

func TestTrackerReportsAFailingFinishWrite(t *testing.T) {
	calls := &finishCalls{err: errors.New("refused")}
	tr := newTracker([]PlannedWorkload{{Name: "doomed"}}, calls.finish)
	tr.retryDelay = 0
	tr.observe(t.Context(), workloadIn("doomed", kueue.WorkloadAdmitted), time.Now())
	select {
	case err := <-tr.failed:
		if calls.count() != 5 {
			t.Errorf("attempts = %d, want 5", calls.count())
		}
		if err == nil || !errors.Is(err, calls.err) {
			t.Errorf("error = %v, want it to wrap the write's error", err)
		}
	case <-tr.allFinished:
		t.Fatal("a Workload whose Finished write failed counted as finished")
	case <-time.After(30 * time.Second):
		t.Fatal("no failure reported")
	}
}
