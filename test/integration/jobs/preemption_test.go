package jobs

import (
	"context"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// A high-priority Job preempts a running low-priority one of its queue: the
// victim is suspended first, its quota goes only once its pods are gone,
// then the preemptor runs; the victim waits again with its template back.
func TestPreemptedJobStopsBeforeItsQuotaMoves(t *testing.T) {
	q, urgentClass, low := runningLowPriorityJob(t)
	startPods(t, low, 2)

	urgent := newJob(q.ns, "lq", 2, "1")
	urgent.Labels[kueue.PriorityClassLabel] = urgentClass
	cluster.MustCreate(t, urgent)
	waitJob(t, low, "to be suspended by the preemption", suspended)
	waitEvent(t, low, integration.EventStopped, kueue.EvictedByPreemption)
	// Its pods still run: the preemptor waits.
	if wl := waitWorkload(t, urgent, "to wait for the preempted Job", func(wl *kueue.Workload) error { return pending(wl) }); wl.Status.Admission != nil {
		t.Fatal("the preemptor was admitted while the victim's pods ran")
	}
	if ptr.Deref(getJob(t, urgent).Spec.Suspend, false) == false {
		t.Fatal("the preemptor runs while the victim's pods run")
	}

	setJobStatus(t, low, func(current *batchv1.Job) {
		current.Status.Active, current.Status.Ready, current.Status.StartTime = 0, ptr.To(int32(0)), nil
	})
	waitJob(t, urgent, "to run once the victim stopped", running)
	waitWorkload(t, low, "to wait again", pending)
}

// A Job admitted and preempted before its own status counted the pod its
// controller had just created (the soak drill found this escape): the Job
// reports nothing active, the API server lists a running pod. Its quota
// stays until that pod has ended.
func TestPreemptedJobKeepsItsQuotaForAPodItsStatusDoesNotCountYet(t *testing.T) {
	q, urgentClass, low := runningLowPriorityJob(t)
	pod := jobPod(t, low) // status.active stays 0

	urgent := newJob(q.ns, "lq", 2, "1")
	urgent.Labels[kueue.PriorityClassLabel] = urgentClass
	cluster.MustCreate(t, urgent)
	waitJob(t, low, "to be suspended by the preemption", suspended)
	// Watch long enough for the settle time and a look at the pods to
	// have passed (an observation window, not a synchronization).
	framework.Eventually(t, "the eviction to be 3 s old", func(context.Context) (bool, error) {
		wl := getWorkloadOf(t, low)
		if wl == nil {
			return false, fmt.Errorf("the preempted Job's Workload is gone")
		}
		c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted)
		return c != nil && c.Status == metav1.ConditionTrue && time.Since(c.LastTransitionTime.Time) >= 3*time.Second, nil
	})
	if wl := getWorkloadOf(t, low); wl == nil || wl.Status.Admission == nil {
		t.Fatal("the preempted Job's quota went while its pod ran")
	}
	if wl := getWorkloadOf(t, urgent); wl == nil || wl.Status.Admission != nil {
		t.Fatal("the preemptor was admitted while the victim's pod ran")
	}
	if err := framework.CheckQuotaInvariant(context.Background(), cluster.Client); err != nil {
		t.Fatal(err)
	}

	pod.Status.Phase = corev1.PodFailed
	if err := cluster.Client.Status().Update(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	waitJob(t, urgent, "to run once the victim's pod ended", running)
	waitWorkload(t, low, "to wait again", pending)
}

// runningLowPriorityJob makes a 2-CPU queue that preempts lower priorities
// within itself, a high-priority class, and a 2-pod Job running in it.
func runningLowPriorityJob(t *testing.T) (q *queueSetup, urgentClass string, low *batchv1.Job) {
	t.Helper()
	q = newQueue(t, "2", false)
	update(t, q.cq, func() {
		q.cq.Spec.Preemption = &kueue.ClusterQueuePreemption{WithinClusterQueue: kueue.PreemptionPolicyLowerPriority}
	})
	class := &kueue.WorkloadPriorityClass{}
	class.Name = cluster.Unique("urgent")
	class.Value = 1000
	cluster.MustCreate(t, class)
	low = newJob(q.ns, "lq", 2, "1")
	cluster.MustCreate(t, low)
	waitJob(t, low, "to run", running)
	return q, class.Name, low
}
