package jobs

import (
	"context"
	"fmt"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// A running Job whose parallelism is raised beyond its admission (1 of a
// 2-CPU queue raised to 6) must not get a single pod more: the raise
// suspends it in the same update, its Workload is evicted (JobChanged),
// and it queues again with its new count, which waits (it can never fit).
func TestRaisedParallelismOfARunningJobStopsAndRequeues(t *testing.T) {
	q := newQueue(t, "2", false)
	j := newJob(q.ns, "lq", 1, "1")
	j.Spec.Completions = ptr.To(int32(12))
	runJob(t, j, 1)

	update(t, j, func() { j.Spec.Parallelism = ptr.To(int32(6)) })
	// The update itself came back suspended: the Job controller never saw
	// it running with 6.
	if !ptr.Deref(j.Spec.Suspend, false) {
		t.Fatalf("parallelism raised to 6 on a running Job: suspend=%v after the update, want true", j.Spec.Suspend)
	}
	waitWorkload(t, j, "to be evicted as changed", func(wl *kueue.Workload) error {
		c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted)
		if c == nil || c.Reason != integration.EvictedReasonJobChanged || !strings.Contains(c.Message, "main has 6 pods, 1 admitted") {
			return fmt.Errorf("Evicted: %+v", c)
		}
		return nil
	})
	waitEvent(t, j, integration.EventStopped, "no longer matches its admission", "6 pods, 1 admitted")
	// The Job controller removes its pods; then the quota goes back.
	setJobStatus(t, j, func(current *batchv1.Job) {
		current.Status.Active, current.Status.Ready, current.Status.StartTime = 0, ptr.To(int32(0)), nil
	})
	wl := waitWorkload(t, j, "to queue again with 6 pods", func(wl *kueue.Workload) error {
		if wl.Status.Admission != nil || wl.Spec.PodSets[0].Count != 6 {
			return fmt.Errorf("admission %v, count %d", wl.Status.Admission, wl.Spec.PodSets[0].Count)
		}
		return nil
	})
	cluster.WaitPending(t, wl, kueue.ReasonExceedsMaxQuota)
	if got := getJob(t, j); !ptr.Deref(got.Spec.Suspend, false) || ptr.Deref(got.Spec.Parallelism, 0) != 6 {
		t.Errorf("job suspend=%v parallelism=%v, want suspended with the user's 6", got.Spec.Suspend, got.Spec.Parallelism)
	}
	if err := framework.CheckQuotaInvariant(context.Background(), cluster.Client); err != nil {
		t.Fatal(err)
	}
}

// A lowered parallelism is not a stop: the pods it no longer has are
// reclaimable and their quota frees up while it runs.
func TestLoweredParallelismOfARunningJobIsReclaimable(t *testing.T) {
	q := newQueue(t, "4", false)
	j := newJob(q.ns, "lq", 4, "1")
	runJob(t, j, 4)
	update(t, j, func() { j.Spec.Parallelism = ptr.To(int32(1)) })
	waitWorkload(t, j, "to report 3 reclaimable pods", func(wl *kueue.Workload) error {
		if len(wl.Status.ReclaimablePods) != 1 || wl.Status.ReclaimablePods[0].Count != 3 {
			return fmt.Errorf("reclaimablePods %v", wl.Status.ReclaimablePods)
		}
		return framework.Admitted(wl)
	})
	if got := getJob(t, j); ptr.Deref(got.Spec.Suspend, false) {
		t.Error("a Job whose parallelism was lowered was stopped")
	}
	other := newJob(q.ns, "lq", 3, "1")
	cluster.MustCreate(t, other)
	waitWorkload(t, other, "to be admitted in the freed quota", framework.Admitted)

	// Raised back, it must not take the places it gave back (the other
	// Job holds them): it stops and queues again at its new size.
	update(t, j, func() { j.Spec.Parallelism = ptr.To(int32(4)) })
	waitWorkload(t, j, "to be evicted", func(wl *kueue.Workload) error {
		if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted); c == nil || c.Reason != integration.EvictedReasonJobChanged {
			return fmt.Errorf("evicted condition %v", c)
		}
		return nil
	})
	waitJob(t, j, "a Job raised back into the places it gave back to stop", suspended)
	setJobStatus(t, j, func(current *batchv1.Job) {
		current.Status.Active, current.Status.Ready, current.Status.StartTime = 0, ptr.To(int32(0)), nil
	})
	waitWorkload(t, j, "to wait at its new size", func(wl *kueue.Workload) error {
		if wl.Spec.PodSets[0].Count != 4 {
			return fmt.Errorf("count %d", wl.Spec.PodSets[0].Count)
		}
		return pending(wl)
	})
	if err := framework.CheckQuotaInvariant(context.Background(), cluster.Client); err != nil {
		t.Fatal(err)
	}
}

// A suspended Job whose queue-name is removed (and that no other rule
// queues) gives its Workload up: an admitted Workload without a job to run
// would hold quota for nothing.
func TestRemovedQueueNameDeletesTheWorkload(t *testing.T) {
	q := newQueue(t, "1", false)
	blocker := newJob(q.ns, "lq", 1, "1")
	cluster.MustCreate(t, blocker)
	waitJob(t, blocker, "to run", running)

	j := newJob(q.ns, "lq", 1, "1")
	cluster.MustCreate(t, j)
	waitWorkload(t, j, "to wait for quota", pending)
	update(t, j, func() { delete(j.Labels, kueue.QueueNameLabel) })
	framework.Eventually(t, "the Workload of the unqueued Job to be deleted", func(ctx context.Context) (bool, error) {
		err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(workloadOf(j)), &kueue.Workload{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	// Quota freed by the blocker goes to nobody: the Job is not queued.
	complete(t, blocker)
	waitWorkload(t, blocker, "to finish", finished(integration.FinishedReasonSucceeded))
	if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(workloadOf(j)), &kueue.Workload{}); !apierrors.IsNotFound(err) {
		t.Errorf("the unqueued Job's Workload came back: %v", err)
	}
}

// jobPod is a pod of the Job as its controller makes them (labelled with
// its UID, controlled by it), Running.
func jobPod(t *testing.T, j *batchv1.Job) *corev1.Pod {
	t.Helper()
	current := getJob(t, j)
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: j.Namespace, Name: cluster.Unique(j.Name),
		Labels:          map[string]string{batchv1.ControllerUidLabel: string(current.UID), batchv1.JobNameLabel: j.Name},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(current, batchv1.SchemeGroupVersion.WithKind("Job"))}},
		Spec: *current.Spec.Template.Spec.DeepCopy()}
	cluster.MustCreate(t, p)
	p.Status.Phase = corev1.PodRunning
	if err := cluster.Client.Status().Update(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return p
}

// A Job deleted with orphan propagation leaves its pods running: its
// quota stays held until they are gone, so a second Job can't take it.
func TestDeletedJobHoldsItsQuotaUntilItsPodsAreGone(t *testing.T) {
	q := newQueue(t, "2", false)
	j := newJob(q.ns, "lq", 2, "1")
	runJob(t, j, 2)
	pods := []*corev1.Pod{jobPod(t, j), jobPod(t, j)}

	if err := cluster.Client.Delete(context.Background(), getJob(t, j), client.PropagationPolicy(metav1.DeletePropagationOrphan)); err != nil {
		t.Fatal(err)
	}
	next := newJob(q.ns, "lq", 2, "1")
	cluster.MustCreate(t, next)
	waitWorkload(t, next, "to wait for the orphaned pods' quota", pending)
	held := waitWorkload(t, j, "to be deleted but still held", func(wl *kueue.Workload) error {
		if wl.DeletionTimestamp.IsZero() {
			return fmt.Errorf("not deleted")
		}
		return framework.Admitted(wl)
	})
	if err := framework.CheckQuotaInvariant(context.Background(), cluster.Client); err != nil {
		t.Fatal(err)
	}
	// One pod ends, one is deleted: then the quota moves.
	pods[0].Status.Phase = corev1.PodSucceeded
	if err := cluster.Client.Status().Update(context.Background(), pods[0]); err != nil {
		t.Fatal(err)
	}
	if got := getWorkloadOf(t, j); got == nil || got.UID != held.UID {
		t.Fatal("the Workload went while a pod of its Job still ran")
	}
	if err := cluster.Client.Delete(context.Background(), pods[1], client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	waitWorkload(t, next, "to be admitted once the pods are gone", framework.Admitted)
	framework.Eventually(t, "the deleted Job's Workload to go", func(ctx context.Context) (bool, error) {
		return gone(ctx, workloadOf(j))
	})
}

// A Workload deleted under a running Job keeps its quota until the Job has
// stopped; then a new Workload queues for it.
func TestDeletedWorkloadOfARunningJobStopsItFirst(t *testing.T) {
	q := newQueue(t, "1", false)
	j := newJob(q.ns, "lq", 1, "1")
	wl := runJob(t, j, 1)
	other := newJob(q.ns, "lq", 1, "1")
	cluster.MustCreate(t, other)
	waitWorkload(t, other, "to wait", pending)

	if err := cluster.Client.Delete(context.Background(), wl); err != nil {
		t.Fatal(err)
	}
	waitJob(t, j, "to be stopped", suspended)
	waitEvent(t, j, integration.EventStopped, "is being deleted")
	if got := getWorkloadOf(t, j); got == nil || got.UID != wl.UID {
		t.Fatal("the Workload went while its Job's pods still ran")
	}
	if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(workloadOf(other)), wl); err != nil || framework.Reserved(wl) {
		t.Fatalf("the other Job got the quota while the first one's pods ran (err %v)", err)
	}
	setJobStatus(t, j, func(current *batchv1.Job) {
		current.Status.Active, current.Status.Ready, current.Status.StartTime = 0, ptr.To(int32(0)), nil
	})
	waitWorkload(t, other, "to take the freed quota", framework.Admitted)
}

// runJob creates a queued Job and plays its controller starting pods
// pods once it is admitted; it returns the admitted Workload.
func runJob(t *testing.T, j *batchv1.Job, pods int32) *kueue.Workload {
	t.Helper()
	cluster.MustCreate(t, j)
	wl := waitWorkload(t, j, "to be admitted", framework.Admitted)
	waitJob(t, j, "to run", running)
	startPods(t, j, pods)
	return wl
}

// getWorkloadOf is the Job's Workload, or nil when there is none.
func getWorkloadOf(t *testing.T, j *batchv1.Job) *kueue.Workload {
	t.Helper()
	wl := &kueue.Workload{}
	err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(workloadOf(j)), wl)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return wl
}

// A batch Job is no parent of another Job: its Workload counts only its
// own pods. A Job that names a queued Job as its controller owner (with or
// without the standalone opt-in) is queued itself, not left unsuspended as
// if its owner counted it.
func TestJobControlledByAnotherJobIsQueued(t *testing.T) {
	q := newQueue(t, "1", false)
	owner := newJob(q.ns, "lq", 1, "1")
	runJob(t, owner, 1)
	for _, standalone := range []bool{false, true} {
		child := newJob(q.ns, "lq", 1, "1")
		child.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, batchv1.SchemeGroupVersion.WithKind("Job"))}
		if standalone {
			child.Annotations = map[string]string{kueue.StandaloneAnnotation: "true"}
		}
		cluster.MustCreate(t, child)
		if !ptr.Deref(child.Spec.Suspend, false) {
			t.Fatalf("standalone=%v: a Job controlled by a queued Job was created running, outside its queue", standalone)
		}
		waitWorkload(t, child, "to wait for quota", func(wl *kueue.Workload) error {
			if wl.Status.Admission != nil {
				return fmt.Errorf("admitted beyond the queue's quota")
			}
			return nil
		})
	}
}

// The Pods of a queued Job can't be resized in place: the Job's Workload
// holds the quota of the requests they were admitted with. The pod
// integration is off here: the resize guard is on with any integration.
// A Pod of a Job sluice doesn't queue may be resized.
func TestPodsOfAQueuedJobCannotBeResized(t *testing.T) {
	s := newQueue(t, "2", false)
	queued := newJob(s.ns, "lq", 1, "1")
	unqueued := newJob(s.ns, "", 1, "1")
	cluster.MustCreate(t, queued, unqueued)
	started := waitJob(t, queued, "to run", running)
	for _, tc := range []struct {
		job     *batchv1.Job
		refused bool
	}{{started, true}, {getJob(t, unqueued), false}} {
		// A Pod as the Job controller makes it.
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: cluster.Unique("pod"), Labels: tc.job.Spec.Selector.MatchLabels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(tc.job, batchv1.SchemeGroupVersion.WithKind("Job"))}},
			Spec: *tc.job.Spec.Template.Spec.DeepCopy()}
		cluster.MustCreate(t, pod)
		pod.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("2")
		pod.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
		err := cluster.Client.SubResource("resize").Update(context.Background(), pod)
		switch {
		case tc.refused && (!apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.containers[0].resources") || !strings.Contains(err.Error(), "Job "+tc.job.Name)):
			t.Errorf("resizing a Pod of queued Job %s: %v, want refused naming the field and the Job", tc.job.Name, err)
		case !tc.refused && err != nil:
			t.Errorf("resizing a Pod of unqueued Job %s: %v", tc.job.Name, err)
		}
	}
}
