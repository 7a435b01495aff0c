package admission

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/workload"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// checkedQueue is a ClusterQueue whose admission checks are run by a
// third-party controller the tests play.
func checkedQueue(t *testing.T, rules []kueue.AdmissionCheckStrategyRule, qs ...fq) (ns string, cq *kueue.ClusterQueue) {
	t.Helper()
	ns = namespace(t, nil)
	cq = clusterQueue(cluster.Unique("cq"), "", qs...)
	cq.Spec.AdmissionChecksStrategy = &kueue.AdmissionChecksStrategy{AdmissionChecks: rules}
	cluster.MustCreate(t, cq, localQueue(ns, "lq", cq.Name))
	waitActive(t, cq)
	return ns, cq
}

// A reservation in a ClusterQueue with checks is not an admission: the
// workload holds its quota, lists the checks its flavors call for
// (onFlavors), says which it waits for and since when (and, past the
// manager's stuck threshold, for how long), and is admitted once all are
// Ready.
func TestAdmissionChecksGateAdmission(t *testing.T) {
	f1, f2 := flavor(cluster.Unique("f1"), nil), flavor(cluster.Unique("f2"), nil)
	cluster.MustCreate(t, f1, f2)
	everywhere := cluster.ActiveAdmissionCheck(t, "example.com/budget")
	onF1 := cluster.ActiveAdmissionCheck(t, "example.com/licence")
	onF2 := cluster.ActiveAdmissionCheck(t, "example.com/data-locality")
	ns, _ := checkedQueue(t, []kueue.AdmissionCheckStrategyRule{{Name: everywhere.Name},
		{Name: onF1.Name, OnFlavors: []kueue.ResourceFlavorReference{kueue.ResourceFlavorReference(f1.Name)}},
		{Name: onF2.Name, OnFlavors: []kueue.ResourceFlavorReference{kueue.ResourceFlavorReference(f2.Name)}}},
		fq{flavor: f1.Name, nominal: "1"}, fq{flavor: f2.Name, nominal: "1"})

	first := newWorkload(ns, "first", "lq", 0, 1, "1")
	cluster.MustCreate(t, first)
	got := cluster.WaitWorkload(t, first, "reserved, waiting for its checks", func(wl *kueue.Workload) error {
		if !reserved(wl) {
			return fmt.Errorf("not reserved: %v", wl.Status.Conditions)
		}
		return framework.ConditionIs(kueue.WorkloadAdmitted, metav1.ConditionFalse, workload.ReasonUnsatisfiedAdmissionChecks,
			everywhere.Name+" is Pending since", onF1.Name+" is Pending since")(wl)
	})
	if want := map[string]kueue.CheckState{everywhere.Name: kueue.CheckStatePending, onF1.Name: kueue.CheckStatePending}; !maps.Equal(framework.CheckStates(got), want) {
		t.Fatalf("checks of a workload on %s = %v, want %v", f1.Name, framework.CheckStates(got), want)
	}
	// The second goes to the second flavor, whose onFlavors check it gets.
	second := newWorkload(ns, "second", "lq", 0, 1, "1")
	cluster.MustCreate(t, second)
	got = cluster.WaitWorkload(t, second, "reserved in the second flavor", func(wl *kueue.Workload) error {
		if !reserved(wl) {
			return fmt.Errorf("not reserved: %v", wl.Status.Conditions)
		}
		return nil
	})
	if want := map[string]kueue.CheckState{everywhere.Name: kueue.CheckStatePending, onF2.Name: kueue.CheckStatePending}; !maps.Equal(framework.CheckStates(got), want) {
		t.Fatalf("checks of a workload on %s = %v, want %v", f2.Name, framework.CheckStates(got), want)
	}
	// Quota stays reserved while checks are pending.
	third := newWorkload(ns, "third", "lq", 0, 1, "1")
	cluster.MustCreate(t, third)
	waitPending(t, third, kueue.ReasonWaitingForQuota)

	// A check pending past the stuck threshold says for how long.
	cluster.WaitWorkload(t, first, "to say how long its checks wait", framework.ConditionIs(kueue.WorkloadAdmitted, metav1.ConditionFalse,
		workload.ReasonUnsatisfiedAdmissionChecks, onF1.Name+" is Pending since", "(for more than "))

	cluster.SetCheck(t, first, everywhere.Name, kueue.CheckStateReady, nil)
	cluster.WaitWorkload(t, first, "to wait for the check still pending", func(wl *kueue.Workload) error {
		if strings.Contains(meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadAdmitted).Message, everywhere.Name) {
			return fmt.Errorf("still names the Ready check: %v", wl.Status.Conditions)
		}
		return framework.ConditionIs(kueue.WorkloadAdmitted, metav1.ConditionFalse, workload.ReasonUnsatisfiedAdmissionChecks, onF1.Name)(wl)
	})
	cluster.SetCheck(t, first, onF1.Name, kueue.CheckStateReady, nil)
	cluster.WaitWorkload(t, first, "admitted", framework.ConditionIs(kueue.WorkloadAdmitted, metav1.ConditionTrue, "Admitted"))
	if get(t, third); reserved(third) {
		t.Fatal("a third workload got quota held by two reservations")
	}
}

// Retry gives the reservation back and queues the workload again once the
// check's requeueAfterSeconds passed, its checks Pending again with the
// retry counted; others use the quota meanwhile. Rejected deactivates the
// workload, naming the check.
func TestAdmissionCheckRetryAndReject(t *testing.T) {
	check := cluster.ActiveAdmissionCheck(t, "example.com/capacity")
	ns, _ := checkedQueue(t, []kueue.AdmissionCheckStrategyRule{{Name: check.Name}}, fq{flavor: defaultFlavor(t), nominal: "1"})
	retried := newWorkload(ns, "retried", "lq", 0, 1, "1")
	cluster.MustCreate(t, retried)
	cluster.WaitWorkload(t, retried, "reserved", func(wl *kueue.Workload) error {
		if !reserved(wl) {
			return fmt.Errorf("not reserved")
		}
		return nil
	})
	rejected := newWorkload(ns, "rejected", "lq", 0, 1, "1")
	cluster.MustCreate(t, rejected)

	cluster.SetCheck(t, retried, check.Name, kueue.CheckStateRetry, func(s *kueue.AdmissionCheckState) {
		s.Message, s.RequeueAfterSeconds = "no capacity yet", ptr.To[int32](4)
	})
	got := cluster.WaitWorkload(t, retried, "evicted to retry, backing off", func(wl *kueue.Workload) error {
		if reserved(wl) {
			return fmt.Errorf("still reserved")
		}
		if err := framework.ConditionIs(kueue.WorkloadEvicted, metav1.ConditionTrue, kueue.EvictedByAdmissionCheck, check.Name, "no capacity yet", "asks to retry")(wl); err != nil {
			return err
		}
		return framework.ConditionIs(kueue.WorkloadRequeued, metav1.ConditionFalse, kueue.EvictedByAdmissionCheck, "after a backoff")(wl)
	})
	if rs := got.Status.RequeueState; rs == nil || rs.RequeueAt == nil {
		t.Fatalf("requeueState = %+v, want requeueAt", rs)
	}
	if c := got.Status.AdmissionChecks[0]; c.State != kueue.CheckStatePending || ptr.Deref(c.RetryCount, 0) != 1 || c.Message != "" {
		t.Fatalf("check after the retry = %+v, want Pending, retryCount 1, its message cleared", c)
	}
	// The quota it gave back goes to the next workload during its backoff.
	cluster.WaitWorkload(t, rejected, "reserved while the first backs off", func(wl *kueue.Workload) error {
		if !reserved(wl) {
			return fmt.Errorf("not reserved")
		}
		return nil
	})
	if get(t, retried); reserved(retried) {
		t.Fatal("a workload backing off got quota before its requeueAt")
	}

	cluster.SetCheck(t, rejected, check.Name, kueue.CheckStateRejected, func(s *kueue.AdmissionCheckState) { s.Message = "over budget" })
	got = cluster.WaitWorkload(t, rejected, "deactivated by the rejection", func(wl *kueue.Workload) error {
		if reserved(wl) || workload.IsActive(wl) {
			return fmt.Errorf("reserved %v, active %v", reserved(wl), workload.IsActive(wl))
		}
		return framework.ConditionIs(kueue.WorkloadEvicted, metav1.ConditionTrue, "DeactivatedDueToAdmissionCheck", check.Name, "over budget", "rejected")(wl)
	})
	if workload.IsDeactivationTarget(got) {
		t.Fatalf("the DeactivationTarget mark stays after the deactivation: %v", got.Status.Conditions)
	}

	got = cluster.WaitWorkload(t, retried, "queued again after its backoff and reserved", func(wl *kueue.Workload) error {
		if !reserved(wl) {
			return fmt.Errorf("not reserved: %v", wl.Status.Conditions)
		}
		return framework.ConditionIs(kueue.WorkloadRequeued, metav1.ConditionTrue, "BackoffFinished")(wl)
	})
	if c := got.Status.AdmissionChecks[0]; c.State != kueue.CheckStatePending || ptr.Deref(c.RetryCount, 0) != 1 {
		t.Fatalf("check on the new reservation = %+v, want Pending with the retry counted", c)
	}
	if rs := got.Status.RequeueState; rs != nil && !rs.RequeueAt.IsZero() && rs.RequeueAt.After(time.Now()) {
		t.Fatalf("requeueAt %v is still ahead once queued again", got.Status.RequeueState.RequeueAt)
	}
}

// defaultFlavor creates a flavor without labels for one test.
func defaultFlavor(t *testing.T) string {
	t.Helper()
	f := flavor(cluster.Unique("flavor"), nil)
	cluster.MustCreate(t, f)
	return f.Name
}
