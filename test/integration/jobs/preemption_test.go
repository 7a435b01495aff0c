package jobs

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
)

// A high-priority Job preempts a running low-priority one of its queue: the
// victim is suspended first, its quota goes only once its pods are gone,
// then the preemptor runs; the victim waits again with its template back.
func TestPreemptedJobStopsBeforeItsQuotaMoves(t *testing.T) {
	q := newQueue(t, "2", false)
	update(t, q.cq, func() {
		q.cq.Spec.Preemption = &kueue.ClusterQueuePreemption{WithinClusterQueue: kueue.PreemptionPolicyLowerPriority}
	})
	urgentClass := &kueue.WorkloadPriorityClass{}
	urgentClass.Name = cluster.Unique("urgent")
	urgentClass.Value = 1000
	cluster.MustCreate(t, urgentClass)

	low := newJob(q.ns, "lq", 2, "1")
	cluster.MustCreate(t, low)
	waitJob(t, low, "to run", running)
	startPods(t, low, 2)

	urgent := newJob(q.ns, "lq", 2, "1")
	urgent.Labels[kueue.PriorityClassLabel] = urgentClass.Name
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
