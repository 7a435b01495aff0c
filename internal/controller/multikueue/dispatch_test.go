package multikueue

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

func TestNominate(t *testing.T) {
	since := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	usable := []string{"e", "a", "d", "b", "c"}
	all := Dispatcher{Name: configapi.MultiKueueDispatcherModeAllAtOnce}
	if got, next := all.nominate(usable, since, since.Add(time.Hour)); !slices.Equal(got, []string{"a", "b", "c", "d", "e"}) || !next.IsZero() {
		t.Fatalf("AllAtOnce = %v, next %v", got, next)
	}
	inc := Dispatcher{Name: configapi.MultiKueueDispatcherModeIncremental, StepSize: 2}
	for _, tc := range []struct {
		after    time.Duration
		want     []string
		nextIn   time.Duration
		noneNext bool
	}{
		{0, []string{"a", "b"}, incrementalRound, false},
		{incrementalRound - time.Second, []string{"a", "b"}, incrementalRound, false},
		{incrementalRound, []string{"a", "b", "c", "d"}, 2 * incrementalRound, false},
		{2 * incrementalRound, []string{"a", "b", "c", "d", "e"}, 0, true},
	} {
		got, next := inc.nominate(usable, since, since.Add(tc.after))
		if !slices.Equal(got, tc.want) {
			t.Errorf("after %s: nominated %v, want %v", tc.after, got, tc.want)
		}
		if tc.noneNext != next.IsZero() || (!tc.noneNext && !next.Equal(since.Add(tc.nextIn))) {
			t.Errorf("after %s: next round at %v, want since+%s", tc.after, next, tc.nextIn)
		}
	}
}

func reservedAt(at time.Time) *kueue.Workload {
	return &kueue.Workload{Status: kueue.WorkloadStatus{Conditions: []metav1.Condition{
		{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(at)}}}}
}

func TestWinnerIsTheFirstReservation(t *testing.T) {
	now := time.Now()
	if got := winner(map[string]*kueue.Workload{"a": {}, "b": {}}); got != "" {
		t.Fatalf("winner among unreserved copies = %q", got)
	}
	got := winner(map[string]*kueue.Workload{"a": reservedAt(now.Add(time.Second)), "b": reservedAt(now), "c": {}})
	if got != "b" {
		t.Fatalf("winner = %q, want b (reserved first)", got)
	}
	if got := winner(map[string]*kueue.Workload{"b": reservedAt(now), "a": reservedAt(now)}); got != "a" {
		t.Fatalf("tie winner = %q, want a (by name)", got)
	}
}

func TestLost(t *testing.T) {
	now := time.Now()
	mkc := &kueue.MultiKueueCluster{}
	if gone, _ := lost(mkc, time.Minute, now); gone {
		t.Fatal("a cluster without condition is lost")
	}
	mkc.Status.Conditions = []metav1.Condition{{Type: kueue.MultiKueueClusterActive, Status: metav1.ConditionFalse, LastTransitionTime: metav1.NewTime(now.Add(-30 * time.Second))}}
	if gone, at := lost(mkc, time.Minute, now); gone || !at.Equal(now.Add(30*time.Second)) {
		t.Fatalf("inactive 30s of 1m: lost %v at %v", gone, at)
	}
	if gone, _ := lost(mkc, 10*time.Second, now); !gone {
		t.Fatal("inactive 30s with a 10s timeout is not lost")
	}
}
