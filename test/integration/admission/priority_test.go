package admission

import (
	"context"
	"strings"
	"testing"

	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// A Workload's priority is resolved from its priorityClassRef when it is
// created, and stays when the class changes later.
func TestPriorityResolvedAtCreation(t *testing.T) {
	ns := namespace(t, nil)
	wpc := &kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: cluster.Unique("wpc")}, Value: 500}
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: cluster.Unique("pc")}, Value: 70}
	cluster.MustCreate(t, wpc, pc)

	fromWPC := newWorkload(ns, "from-wpc", "lq", 0, 1, "1")
	fromWPC.Spec.Priority = nil
	fromWPC.Spec.PriorityClassRef = &kueue.PriorityClassRef{Group: kueue.WorkloadPriorityClassGroup, Kind: kueue.WorkloadPriorityClassKind, Name: wpc.Name}
	fromPC := newWorkload(ns, "from-pc", "lq", 0, 1, "1")
	fromPC.Spec.Priority = nil
	fromPC.Spec.PriorityClassRef = &kueue.PriorityClassRef{Group: kueue.PodPriorityClassGroup, Kind: kueue.PodPriorityClassKind, Name: pc.Name}
	explicit := newWorkload(ns, "explicit", "lq", 7, 1, "1")
	explicit.Spec.PriorityClassRef = fromWPC.Spec.PriorityClassRef
	cluster.MustCreate(t, fromWPC, fromPC, explicit)
	for wl, want := range map[*kueue.Workload]int32{fromWPC: 500, fromPC: 70, explicit: 7} {
		if got := get(t, wl).Spec.Priority; got == nil || *got != want {
			t.Errorf("%s: priority %v, want %d", wl.Name, got, want)
		}
	}

	update(t, wpc, func() { wpc.Value = 1 })
	if got := *get(t, fromWPC).Spec.Priority; got != 500 {
		t.Errorf("changing the class changed an existing Workload's priority to %d", got)
	}

	missing := newWorkload(ns, "missing", "lq", 0, 1, "1")
	missing.Spec.Priority = nil
	missing.Spec.PriorityClassRef = &kueue.PriorityClassRef{Group: kueue.WorkloadPriorityClassGroup, Kind: kueue.WorkloadPriorityClassKind, Name: "no-such-class"}
	err := cluster.Client.Create(context.Background(), missing)
	if err == nil || !strings.Contains(err.Error(), "spec.priorityClassRef.name") {
		t.Errorf("a Workload naming a missing class: %v", err)
	}
}
