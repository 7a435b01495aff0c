package pods

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// expectRefused checks that err is the API server passing on a webhook's
// refusal that names field.
func expectRefused(t *testing.T, err error, field string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted, want a refusal naming %s", field)
	}
	if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) {
		t.Fatalf("refused for another reason: %v", err)
	}
	if !strings.Contains(err.Error(), field) {
		t.Errorf("error %q does not name %s", err, field)
	}
}

// tryUpdate applies mutate to the latest version of the Pod and returns
// what the API server answers. It acts as a tenant, not as sluice.
func tryUpdate(t *testing.T, p *corev1.Pod, mutate func(*corev1.Pod)) error {
	t.Helper()
	tenant := cluster.TenantClient(t)
	current := &corev1.Pod{}
	if err := tenant.Get(context.Background(), client.ObjectKeyFromObject(p), current); err != nil {
		t.Fatal(err)
	}
	mutate(current)
	return tenant.Update(context.Background(), current)
}

// A waiting Pod's owner can't take it out of its queue: neither the managed
// label nor the admission gate can be removed before admission, and the
// label never.
func TestQueuedPodCannotLeaveItsQueue(t *testing.T) {
	ns, _ := newQueue(t, "1")
	running := newPod(ns, "lq")
	cluster.MustCreate(t, running)
	waitPod(t, running, "to be admitted", ungated)
	waiting := newPod(ns, "lq")
	cluster.MustCreate(t, waiting)
	waitWorkload(t, waiting, "to wait for quota", func(*kueue.Workload) error { return nil })

	expectRefused(t, tryUpdate(t, waiting, func(p *corev1.Pod) {
		delete(p.Labels, kueue.ManagedLabel)
		p.Spec.SchedulingGates = nil
	}), "metadata.labels[kueue.x-k8s.io/managed]")
	expectRefused(t, tryUpdate(t, waiting, func(p *corev1.Pod) { p.Spec.SchedulingGates = nil }), "spec.schedulingGates")
	expectRefused(t, tryUpdate(t, running, func(p *corev1.Pod) { p.Labels[kueue.ManagedLabel] = "false" }), "metadata.labels[kueue.x-k8s.io/managed]")
	if got := waitPod(t, waiting, "to stay queued", func(*corev1.Pod) error { return nil }); !queued(got) {
		t.Errorf("the waiting Pod left its queue: gates %v labels %v", got.Spec.SchedulingGates, got.Labels)
	}
}

// A controller reference to an owner that doesn't exist, to another object
// of that name, or to a Job that doesn't select the Pod, doesn't exempt a
// Pod from queueing.
func TestForgedOwnerDoesNotSkipQueueing(t *testing.T) {
	ns, _ := newQueue(t, "4")
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster.Unique("real"),
		Labels: map[string]string{kueue.QueueNameLabel: "lq"}}, Spec: batchv1.JobSpec{Template: newPodTemplate()}}
	cluster.MustCreate(t, job)
	cases := []struct {
		name string
		ref  metav1.OwnerReference
	}{
		{"an owner that doesn't exist", metav1.OwnerReference{APIVersion: "batch/v1", Kind: "Job", Name: cluster.Unique("ghost"), UID: types.UID("ghost-uid"), Controller: ptr.To(true)}},
		{"the right name with another UID", metav1.OwnerReference{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: types.UID("forged-uid"), Controller: ptr.To(true)}},
		{"a queued Job that doesn't select the Pod", metav1.OwnerReference{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID, Controller: ptr.To(true)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newPod(ns, "lq")
			p.OwnerReferences = []metav1.OwnerReference{tc.ref}
			cluster.MustCreate(t, p)
			if !queued(p) {
				t.Fatalf("a Pod claiming %s was not queued: gates %v labels %v", tc.name, p.Spec.SchedulingGates, p.Labels)
			}
			waitWorkload(t, p, "to exist", func(*kueue.Workload) error { return nil })
		})
	}
	// The Job's own Pods (selected by it) are still its.
	own := newPod(ns, "lq")
	own.Labels[batchv1.ControllerUidLabel] = string(job.UID)
	own.Labels[batchv1.JobNameLabel] = job.Name
	ownedBy(own, job, "Job", "batch/v1")
	cluster.MustCreate(t, own)
	if isGated(own) || own.Labels[kueue.ManagedLabel] == "true" {
		t.Fatalf("a Pod of a queued Job was queued on its own: gates %v labels %v", own.Spec.SchedulingGates, own.Labels)
	}
}

// A Pod naming another Workload as its group can't act on it: its creation
// is refused, and the Workload keeps its admission.
func TestGroupNameOfAnotherWorkloadIsRefused(t *testing.T) {
	ns, _ := newQueue(t, "4")
	victim := framework.Workload(ns, cluster.Unique("victim"), "lq", 0, 1, "1")
	cluster.MustCreate(t, victim)
	cluster.WaitAdmitted(t, victim)

	err := cluster.Client.Create(context.Background(), groupPod(ns, victim.Name, 1))
	expectRefused(t, err, "metadata.labels[kueue.x-k8s.io/pod-group-name]")

	// A real group can't be joined from another queue either.
	cluster.MustCreate(t, &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "other"},
		Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(victimQueue(t, victim))}})
	group := cluster.Unique("group")
	createGroup(t, ns, group, 1, nil)
	framework.Eventually(t, "the group's Workload to exist", func(ctx context.Context) (bool, error) {
		err := cluster.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: group}, &kueue.Workload{})
		return err == nil, client.IgnoreNotFound(err)
	})
	intruder := groupPod(ns, group, 1)
	intruder.Labels[kueue.QueueNameLabel] = "other"
	expectRefused(t, cluster.Client.Create(context.Background(), intruder), "metadata.labels[kueue.x-k8s.io/queue-name]")

	current := &kueue.Workload{}
	if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(victim), current); err != nil {
		t.Fatal(err)
	}
	if !framework.Reserved(current) || slices.ContainsFunc(current.Status.Conditions, func(c metav1.Condition) bool {
		return c.Type == kueue.WorkloadEvicted || c.Type == kueue.WorkloadFinished
	}) {
		t.Errorf("the victim Workload was touched: %v", current.Status.Conditions)
	}
}

// victimQueue is the ClusterQueue a workload was admitted in.
func victimQueue(t *testing.T, wl *kueue.Workload) string {
	t.Helper()
	current := &kueue.Workload{}
	if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(wl), current); err != nil {
		t.Fatal(err)
	}
	return string(current.Status.Admission.ClusterQueue)
}

// An in-place resize of a running queued Pod would take more than its
// admission: refused.
func TestQueuedPodCannotBeResized(t *testing.T) {
	ns, _ := newQueue(t, "2")
	p := newPod(ns, "lq")
	cluster.MustCreate(t, p)
	running := waitPod(t, p, "to be admitted", ungated)
	running.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("2")
	running.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
	err := cluster.Client.SubResource("resize").Update(context.Background(), running)
	expectRefused(t, err, "spec.containers[0].resources")
	if !strings.Contains(err.Error(), "holds the quota of the requests it was admitted with") {
		t.Errorf("refused, but not by sluice: %v", err)
	}
}

// A Pod that joins an admitted pod group of its own queue beyond the
// group's count waits gated: the admission's room is counted by the podSet
// each running Pod was started as (starting one injects the flavor's node
// selector, which changes its shape), so the extra Pod finds none.
func TestExtraPodDoesNotRunOnAGroupsAdmission(t *testing.T) {
	ns, _ := newQueue(t, "2")
	group := cluster.Unique("group")
	pods := createGroup(t, ns, group, 2, nil)
	waitAllUngated(t, pods)
	extra := groupPod(ns, group, 2)
	cluster.MustCreate(t, extra)
	framework.Holds(t, "the extra Pod to stay gated", 3*time.Second, func(ctx context.Context) error {
		if n, err := gatedCount(ctx, []*corev1.Pod{extra}); err != nil || n != 1 {
			return fmt.Errorf("gated %d (err %v): the extra Pod runs on the group's admission", n, err)
		}
		return nil
	})
	// Nor can its owner take the gate off by hand: the group's Workload
	// is admitted, but not for that Pod.
	expectRefused(t, tryUpdate(t, extra, func(p *corev1.Pod) { p.Spec.SchedulingGates = nil }), "spec.schedulingGates")
	if err := framework.CheckQuotaInvariant(context.Background(), cluster.Client); err != nil {
		t.Fatal(err)
	}
}

// A running group's size comes from its Pods' total-count annotation; a
// tenant who lowers it (on its Pods, or through a new member that says
// less) must not get the group's places back while its Pods run.
func TestLoweredGroupCountGivesNoQuotaBack(t *testing.T) {
	ns, _ := newQueue(t, "3")
	group := cluster.Unique("group")
	pods := createGroup(t, ns, group, 3, nil)
	waitAllUngated(t, pods)
	for _, p := range pods {
		framework.Update(t, cluster.Client, p, func() { p.Annotations[kueue.PodGroupTotalCountAnno] = "1" })
	}
	smaller := groupPod(ns, group, 1)
	cluster.MustCreate(t, smaller)
	wl := groupWorkload(ns, group)
	framework.Holds(t, "the group to keep its places", 3*time.Second, func(ctx context.Context) error {
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(wl), wl); err != nil {
			return err
		}
		if len(wl.Status.ReclaimablePods) > 0 {
			return fmt.Errorf("reclaimablePods %v while its 3 Pods run", wl.Status.ReclaimablePods)
		}
		return nil
	})
	if err := framework.CheckQuotaInvariant(context.Background(), cluster.Client); err != nil {
		t.Fatal(err)
	}
}
