package workload

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// PodsReady tells a first start from a recovery, and writes nothing new
// while the pods stay as they were.
func TestSetPodsReadySequence(t *testing.T) {
	wl := &kueue.Workload{}
	now := time.Unix(1000, 0)
	steps := []struct {
		ready   bool
		changed bool
		reason  string
	}{
		{false, true, ReasonWaitForStart},
		{false, false, ReasonWaitForStart},
		{true, true, ReasonStarted},
		{true, false, ReasonStarted},
		{false, true, ReasonWaitForRecovery},
		{false, false, ReasonWaitForRecovery},
		{true, true, ReasonRecovered},
		{true, false, ReasonRecovered},
	}
	for i, s := range steps {
		if changed := SetPodsReady(wl, s.ready, now); changed != s.changed {
			t.Fatalf("step %d (ready=%v): changed = %v, want %v", i, s.ready, changed, s.changed)
		}
		if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadPodsReady); c.Reason != s.reason {
			t.Fatalf("step %d: reason %s, want %s", i, c.Reason, s.reason)
		}
	}
	resetPodsReady(wl, now)
	if SetPodsReady(wl, true, now); meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadPodsReady).Reason != ReasonStarted {
		t.Fatal("after a reset, ready is a first start again")
	}
}

// The deadline counts from the admission until the pods were ready, from
// the loss of readiness after that, and there is none while ready.
func TestPodsReadyDeadline(t *testing.T) {
	admittedAt := time.Unix(1000, 0)
	wl := &kueue.Workload{}
	SetReserved(wl, &kueue.Admission{ClusterQueue: "cq"}, nil, admittedAt)
	if d, recovering, ok := PodsReadyDeadline(wl, time.Minute, 2*time.Minute); !ok || recovering || !d.Equal(admittedAt.Add(time.Minute)) {
		t.Fatalf("first start: %v %v %v", d, recovering, ok)
	}
	SetPodsReady(wl, true, admittedAt.Add(10*time.Second))
	if _, _, ok := PodsReadyDeadline(wl, time.Minute, 2*time.Minute); ok {
		t.Fatal("a deadline while ready")
	}
	lost := admittedAt.Add(time.Hour)
	SetPodsReady(wl, false, lost)
	if d, recovering, ok := PodsReadyDeadline(wl, time.Minute, 2*time.Minute); !ok || !recovering || !d.Equal(lost.Add(2*time.Minute)) {
		t.Fatalf("recovery: %v %v %v", d, recovering, ok)
	}
	if _, recovering, ok := PodsReadyDeadline(wl, time.Minute, 0); ok || !recovering {
		t.Fatal("without a recovery timeout a recovery has no deadline")
	}
}

func TestBackoffDoublesUpToItsMaximum(t *testing.T) {
	for count, want := range map[int32]time.Duration{1: 10 * time.Second, 2: 20 * time.Second, 3: 40 * time.Second, 4: 60 * time.Second, 30: 60 * time.Second} {
		if got := Backoff(count, 10*time.Second, time.Minute); got != want {
			t.Errorf("Backoff(%d) = %v, want %v", count, got, want)
		}
	}
}
