package podsready

import (
	"context"
	"fmt"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/workload"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// queue makes a namespace whose LocalQueue "lq" has cpu of quota.
func queue(t *testing.T, cpu string) string {
	t.Helper()
	ns := cluster.Namespace(t, nil)
	f := framework.Flavor(cluster.Unique("flavor"), nil)
	cq := framework.ClusterQueue(cluster.Unique("cq"), "", framework.CPUQuota{Flavor: f.Name, Nominal: cpu})
	cluster.MustCreate(t, f, cq, framework.LocalQueue(ns, "lq", cq.Name))
	cluster.WaitActive(t, cq)
	return ns
}

// newJob creates a one-pod Job and removes it (and so its Workload) when
// the test ends: an admitted Job left unready would block the next test's
// admissions.
func newJob(t *testing.T, ns string) *batchv1.Job {
	t.Helper()
	j := framework.Job(ns, cluster.Unique("job"), "lq", 1, "1")
	cluster.MustCreate(t, j)
	t.Cleanup(func() {
		_ = cluster.Client.Delete(context.Background(), j, client.PropagationPolicy(metav1.DeletePropagationBackground))
		framework.Eventually(t, "the Workload of "+j.Name+" to go", func(ctx context.Context) (bool, error) {
			err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(framework.JobWorkload(j)), &kueue.Workload{})
			return client.IgnoreNotFound(err) == nil && err != nil, client.IgnoreNotFound(err)
		})
	})
	return j
}

// waitJob waits until the Job is suspended (or not) and returns it.
func waitJob(t *testing.T, j *batchv1.Job, suspended bool) {
	t.Helper()
	framework.Eventually(t, fmt.Sprintf("Job %s suspended=%v", j.Name, suspended), func(ctx context.Context) (bool, error) {
		current := &batchv1.Job{}
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(j), current); err != nil {
			return false, err
		}
		return ptr.Deref(current.Spec.Suspend, false) == suspended, nil
	})
}

// runPods plays the Job controller: active pods, ready of them ready.
func runPods(t *testing.T, j *batchv1.Job, ready int32) {
	t.Helper()
	cluster.SetJobStatus(t, j, func(current *batchv1.Job) {
		if current.Status.StartTime == nil {
			current.Status.StartTime = ptr.To(metav1.Now())
		}
		current.Status.Active, current.Status.Ready = 1, ptr.To(ready)
	})
}

// stopPods plays the Job controller acknowledging a suspension.
func stopPods(t *testing.T, j *batchv1.Job) {
	t.Helper()
	cluster.SetJobStatus(t, j, func(current *batchv1.Job) {
		current.Status.StartTime, current.Status.Active, current.Status.Ready = nil, 0, ptr.To[int32](0)
	})
}

// A Job whose pod is never ready is evicted after the timeout and queued
// again after a backoff; meanwhile blockAdmission held the next Job back
// until the first one's eviction, and the next Job, once its pod is
// ready, no longer blocks anything. The second timeout is past
// backoffLimitCount: the workload is deactivated.
func TestUnreadyPodsAreEvictedThenDeactivated(t *testing.T) {
	ns := queue(t, "4")
	stuck := newJob(t, ns)
	cluster.WaitWorkload(t, framework.JobWorkload(stuck), "admitted", framework.Admitted)
	waitJob(t, stuck, false)
	runPods(t, stuck, 0)

	next := newJob(t, ns)
	cluster.WaitPending(t, framework.JobWorkload(next), "WaitingForPodsReady", "waitForPodsReady.blockAdmission", framework.JobWorkload(stuck).Name)

	got := cluster.WaitWorkload(t, framework.JobWorkload(stuck), "evicted for its unready pods", framework.ConditionIs(kueue.WorkloadEvicted, metav1.ConditionTrue,
		kueue.EvictedByPodsReadyTimeout, "Exceeded the PodsReady timeout of "+timeout.String()))
	if rs := got.Status.RequeueState; rs == nil || ptr.Deref(rs.Count, 0) != 1 || rs.RequeueAt == nil {
		t.Fatalf("requeueState = %+v, want count 1 and a requeueAt", rs)
	}
	waitJob(t, stuck, true)
	stopPods(t, stuck)

	// The eviction unblocks admission: the next Job runs, and once its pod
	// is ready its Workload says so.
	cluster.WaitWorkload(t, framework.JobWorkload(next), "admitted", framework.Admitted)
	waitJob(t, next, false)
	runPods(t, next, 1)
	cluster.WaitWorkload(t, framework.JobWorkload(next), "PodsReady", framework.ConditionIs(kueue.WorkloadPodsReady, metav1.ConditionTrue, workload.ReasonStarted))

	// After its backoff the first is admitted again, still never ready:
	// out of requeues, it is deactivated.
	cluster.WaitWorkload(t, framework.JobWorkload(stuck), "admitted again after its backoff", framework.Admitted)
	waitJob(t, stuck, false)
	runPods(t, stuck, 0)
	got = cluster.WaitWorkload(t, framework.JobWorkload(stuck), "deactivated", framework.ConditionIs(kueue.WorkloadEvicted, metav1.ConditionTrue,
		"DeactivatedDueToRequeuingLimitExceeded", "backoffLimitCount 1"))
	if workload.IsActive(got) {
		t.Fatal("spec.active is still true")
	}
	waitJob(t, stuck, true)
	stopPods(t, stuck)
	cluster.WaitWorkload(t, framework.JobWorkload(stuck), "without a reservation, not queued", func(wl *kueue.Workload) error {
		if framework.Reserved(wl) {
			return fmt.Errorf("still reserved")
		}
		return framework.ConditionIs(kueue.WorkloadRequeued, metav1.ConditionFalse, "DeactivatedDueToRequeuingLimitExceeded")(wl)
	})
}

// Pods that were ready and stop being ready have recoveryTimeout to
// recover before the workload is evicted.
func TestPodsThatStopBeingReadyHaveTheRecoveryTimeout(t *testing.T) {
	ns := queue(t, "2")
	j := newJob(t, ns)
	cluster.WaitWorkload(t, framework.JobWorkload(j), "admitted", framework.Admitted)
	waitJob(t, j, false)
	runPods(t, j, 1)
	cluster.WaitWorkload(t, framework.JobWorkload(j), "PodsReady", framework.ConditionIs(kueue.WorkloadPodsReady, metav1.ConditionTrue, workload.ReasonStarted))
	runPods(t, j, 0)
	cluster.WaitWorkload(t, framework.JobWorkload(j), "waiting for recovery", framework.ConditionIs(kueue.WorkloadPodsReady, metav1.ConditionFalse, workload.ReasonWaitForRecovery))
	runPods(t, j, 1)
	cluster.WaitWorkload(t, framework.JobWorkload(j), "recovered", framework.ConditionIs(kueue.WorkloadPodsReady, metav1.ConditionTrue, workload.ReasonRecovered))
	runPods(t, j, 0)
	cluster.WaitWorkload(t, framework.JobWorkload(j), "evicted after the recovery timeout", framework.ConditionIs(kueue.WorkloadEvicted, metav1.ConditionTrue,
		kueue.EvictedByPodsReadyTimeout, "recovery timeout"))
	waitJob(t, j, true)
	stopPods(t, j)
	cluster.WaitWorkload(t, framework.JobWorkload(j), "back to WaitForStart without a reservation", func(wl *kueue.Workload) error {
		if framework.Reserved(wl) {
			return fmt.Errorf("still reserved")
		}
		return framework.ConditionIs(kueue.WorkloadPodsReady, metav1.ConditionFalse, workload.ReasonWaitForStart)(wl)
	})
}
