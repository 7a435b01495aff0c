package apply

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/workload"
)

func versionOf(rv string, conditions ...metav1.Condition) *kueue.Workload {
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w", ResourceVersion: rv}}
	wl.Status.Conditions = conditions
	return wl
}

var waiting = metav1.Condition{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionFalse, Reason: "WaitingForQuota", Message: "available 1"}

func TestOwnWritesLatest(t *testing.T) {
	o := newOwnWrites()
	v1 := versionOf("1")
	info := &workload.Info{Key: "ns/w", Obj: v1}

	if got := o.latest(info); got.ResourceVersion != "1" || got == v1 {
		t.Fatalf("with no write of ours, latest = version %s (same object: %v), want a copy of version 1", got.ResourceVersion, got == v1)
	}
	o.record("ns/w", "1", versionOf("2", waiting))
	got := o.latest(info)
	if got.ResourceVersion != "2" || !meta.IsStatusConditionFalse(got.Status.Conditions, kueue.WorkloadQuotaReserved) {
		t.Fatalf("a decision on version 1 must apply on our write: got version %s with %v", got.ResourceVersion, got.Status.Conditions)
	}
	got.Status.Conditions[0].Message = "changed by the caller"
	if o.latest(info).Status.Conditions[0].Message != "available 1" {
		t.Fatal("latest shares the recorded conditions with its caller")
	}

	// A second write on top of the first: the watch may still deliver 1.
	o.record("ns/w", "2", versionOf("3", waiting))
	if got := o.latest(info); got.ResourceVersion != "3" {
		t.Fatalf("after a chained write, latest of version 1 = %s, want 3", got.ResourceVersion)
	}

	// The watch still delivers the base: nothing is dropped.
	o.seen(versionOf("1"))
	if got := o.latest(info); got.ResourceVersion != "3" {
		t.Fatalf("seeing the base dropped our write: latest = %s", got.ResourceVersion)
	}
	// The watch delivers our write: a cycle may still decide on the old
	// version, whose write must go on top of ours.
	o.seen(versionOf("3"))
	if got := o.latest(info); got.ResourceVersion != "3" {
		t.Fatalf("seeing our own write dropped it: latest of the old info = %s, want 3", got.ResourceVersion)
	}
	// A newer version arrives: ours is history.
	o.seen(versionOf("5"))
	if got := o.latest(info); got.ResourceVersion != "1" {
		t.Fatalf("after the watch moved past our write, latest of the old info = %s, want its own 1", got.ResourceVersion)
	}

	o.record("ns/w", "1", versionOf("4"))
	o.forget("ns/w")
	if got := o.latest(info); got.ResourceVersion != "1" {
		t.Fatalf("after forget, latest = %s, want 1", got.ResourceVersion)
	}
	// A decision on a version other than the base is applied as it is.
	o.record("ns/w", "7", versionOf("8"))
	if got := o.latest(info); got.ResourceVersion != "1" {
		t.Fatalf("a write on another base changed latest to %s", got.ResourceVersion)
	}
}
