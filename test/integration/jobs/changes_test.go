package jobs

import (
	"context"
	"fmt"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/test/integration/framework"
)

func TestPartialAdmissionRunsWithFewerPods(t *testing.T) {
	q := newQueue(t, "3", false)
	j := newJob(q.ns, "lq", 5, "1")
	j.Annotations = map[string]string{kueue.JobMinParallelismAnno: "2"}
	cluster.MustCreate(t, j)
	wl := waitWorkload(t, j, "to be admitted", framework.Admitted)
	if ps := wl.Spec.PodSets[0]; ps.Count != 5 || ps.MinCount == nil || *ps.MinCount != 2 {
		t.Errorf("podSet count %d minCount %v, want 5 and 2", ps.Count, ps.MinCount)
	}
	if c := wl.Status.Admission.PodSetAssignments[0].Count; c == nil || *c != 3 {
		t.Errorf("admitted count %v, want 3 (what fits)", c)
	}
	started := waitJob(t, j, "to run", running)
	if p := ptr.Deref(started.Spec.Parallelism, 0); p != 3 {
		t.Errorf("parallelism %d, want the admitted 3", p)
	}

	// On eviction the Job gets its own parallelism back.
	update(t, wl, func() { wl.Spec.Active = ptr.To(false) })
	waitWorkload(t, j, "to lose its reservation", pending)
	restored := waitJob(t, j, "to be suspended", suspended)
	if p := ptr.Deref(restored.Spec.Parallelism, 0); p != 5 {
		t.Errorf("parallelism after eviction %d, want the original 5", p)
	}
}

func TestUnsuspendedByHandStaysSuspended(t *testing.T) {
	q := newQueue(t, "1", false)
	blocker := newJob(q.ns, "lq", 1, "1")
	cluster.MustCreate(t, blocker)
	waitJob(t, blocker, "to run", running)

	j := newJob(q.ns, "lq", 1, "1")
	cluster.MustCreate(t, j)
	waitWorkload(t, j, "to wait for quota", pending)
	update(t, j, func() { j.Spec.Suspend = ptr.To(false) })
	// In the update itself: the Job controller never sees it unsuspended.
	if !ptr.Deref(j.Spec.Suspend, false) {
		t.Fatal("a queued Job unsuspended by hand before admission was let through unsuspended")
	}
	waitWorkload(t, j, "to keep waiting", pending)

	// Once admitted, sluice's own start goes through.
	if err := cluster.Client.Delete(context.Background(), blocker, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	waitJob(t, j, "to run once admitted", running)
}

func TestChangesOfASuspendedJobRebuildItsWorkload(t *testing.T) {
	q := newQueue(t, "1", false)
	blocker := newJob(q.ns, "lq", 1, "1")
	cluster.MustCreate(t, blocker)
	waitJob(t, blocker, "to run", running)

	j := newJob(q.ns, "lq", 2, "1")
	j.Spec.Completions = ptr.To(int32(4))
	cluster.MustCreate(t, j)
	wl := waitWorkload(t, j, "to wait for quota", pending)
	uid := wl.UID

	update(t, j, func() { j.Spec.Parallelism = ptr.To(int32(3)) })
	waitWorkload(t, j, "to follow the parallelism", func(wl *kueue.Workload) error {
		if wl.Spec.PodSets[0].Count != 3 {
			return fmt.Errorf("count %d", wl.Spec.PodSets[0].Count)
		}
		return nil
	})

	// Pod resources of a suspended Job may change (Kubernetes 1.35+).
	err := cluster.TryUpdate(j, func() {
		j.Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("500m")
	})
	if err != nil {
		t.Fatalf("the API server refused a resource change of a suspended Job: %v", err)
	}
	wl = waitWorkload(t, j, "to follow the pod resources", func(wl *kueue.Workload) error {
		if got := wl.Spec.PodSets[0].Template.Spec.Containers[0].Resources.Requests.Cpu().String(); got != "500m" {
			return fmt.Errorf("cpu %s", got)
		}
		return nil
	})
	if wl.UID != uid {
		t.Errorf("the Workload was recreated (uid %s, was %s); want it updated in place", wl.UID, uid)
	}
}

func TestWorkloadFollowsItsJob(t *testing.T) {
	q := newQueue(t, "4", false)
	j := newJob(q.ns, "lq", 1, "1")
	cluster.MustCreate(t, j)
	wl := waitWorkload(t, j, "to be admitted", framework.Admitted)

	// Deleted while the Job exists: recreated, and the running Job is not
	// left without a reservation.
	if err := cluster.Client.Delete(context.Background(), wl); err != nil {
		t.Fatal(err)
	}
	waitWorkload(t, j, "to be recreated and admitted", func(current *kueue.Workload) error {
		if current.UID == wl.UID {
			return fmt.Errorf("still the deleted one")
		}
		return framework.Admitted(current)
	})
	waitJob(t, j, "to run", running)

	// Job deleted: its Workload goes too (sluice deletes it; the garbage
	// collector would as well where it runs).
	if err := cluster.Client.Delete(context.Background(), getJob(t, j)); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, "the Workload to be deleted with its Job", func(ctx context.Context) (bool, error) {
		return gone(ctx, workloadOf(j))
	})
}

func TestOrphanedWorkloadIsDeleted(t *testing.T) {
	q := newQueue(t, "4", false)
	// A Workload controlled by a Job that doesn't exist (any more).
	orphan := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: q.ns, Name: cluster.Unique("orphan"),
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: cluster.Unique("gone"), UID: "0000-gone", Controller: ptr.To(true)}}},
		Spec: kueue.WorkloadSpec{QueueName: "lq", PodSets: newWorkloadPodSets()}}
	cluster.MustCreate(t, orphan)
	framework.Eventually(t, "the orphaned Workload to be deleted", func(ctx context.Context) (bool, error) {
		return gone(ctx, orphan)
	})
}

// gone tells whether the object no longer exists.
func gone(ctx context.Context, obj client.Object) (bool, error) {
	err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(obj), &kueue.Workload{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err == nil {
		return false, fmt.Errorf("%s still exists", obj.GetName())
	}
	return false, err
}

func newWorkloadPodSets() []kueue.PodSet {
	return []kueue.PodSet{{Name: "main", Count: 1, Template: newJob("", "", 1, "1").Spec.Template}}
}

func TestReclaimablePodsFreeTheirQuota(t *testing.T) {
	q := newQueue(t, "4", false)
	j := newJob(q.ns, "lq", 2, "1")
	j.Spec.Completions = ptr.To(int32(5))
	cluster.MustCreate(t, j)
	waitJob(t, j, "to run", running)
	startPods(t, j, 2)
	// Four of five completions done: one pod slot never runs again.
	setJobStatus(t, j, func(current *batchv1.Job) {
		current.Status.Succeeded, current.Status.Active, current.Status.Ready = 4, 1, ptr.To(int32(1))
	})
	waitWorkload(t, j, "to report a reclaimable pod", func(wl *kueue.Workload) error {
		if len(wl.Status.ReclaimablePods) != 1 || wl.Status.ReclaimablePods[0].Count != 1 {
			return fmt.Errorf("reclaimablePods %v", wl.Status.ReclaimablePods)
		}
		return nil
	})
	framework.Eventually(t, "the ClusterQueue to count 1 CPU less", func(ctx context.Context) (bool, error) {
		cq := &kueue.ClusterQueue{}
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(q.cq), cq); err != nil {
			return false, err
		}
		for _, fu := range cq.Status.FlavorsUsage {
			for _, r := range fu.Resources {
				if r.Name == string(corev1.ResourceCPU) && r.Total.Cmp(resource.MustParse("1")) == 0 {
					return true, nil
				}
			}
		}
		return false, fmt.Errorf("usage %v", cq.Status.FlavorsUsage)
	})
}

func TestIndexedJobWithBackoffLimitPerIndexRunsUnchanged(t *testing.T) {
	q := newQueue(t, "4", false)
	j := newJob(q.ns, "lq", 2, "1")
	j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	j.Spec.BackoffLimitPerIndex = ptr.To(int32(1))
	j.Spec.MaxFailedIndexes = ptr.To(int32(1))
	j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
		Action:      batchv1.PodFailurePolicyActionFailIndex,
		OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}},
	}}}
	j.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
	cluster.MustCreate(t, j)
	started := waitJob(t, j, "to run", running)
	if ptr.Deref(started.Spec.BackoffLimitPerIndex, 0) != 1 || started.Spec.PodFailurePolicy == nil ||
		ptr.Deref(started.Spec.PodReplacementPolicy, "") != batchv1.Failed {
		t.Errorf("the Job's own policies changed: %+v", started.Spec)
	}
}

func TestPriorityFromTheJob(t *testing.T) {
	q := newQueue(t, "4", false)
	wpc := &kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: cluster.Unique("urgent")}, Value: 1000}
	cluster.MustCreate(t, wpc)
	j := newJob(q.ns, "lq", 1, "1")
	j.Labels[kueue.PriorityClassLabel] = wpc.Name
	cluster.MustCreate(t, j)
	wl := waitWorkload(t, j, "to exist", func(*kueue.Workload) error { return nil })
	if ref := wl.Spec.PriorityClassRef; ref == nil || ref.Kind != kueue.WorkloadPriorityClassKind || ref.Name != wpc.Name ||
		ptr.Deref(wl.Spec.Priority, 0) != 1000 {
		t.Errorf("priorityClassRef %+v, priority %v; want %s = 1000", ref, wl.Spec.Priority, wpc.Name)
	}

	missing := newJob(q.ns, "lq", 1, "1")
	missing.Labels[kueue.PriorityClassLabel] = "no-such-class"
	err := cluster.Client.Create(context.Background(), missing)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), kueue.PriorityClassLabel) || !strings.Contains(err.Error(), "no-such-class") {
		t.Errorf("creating a Job with a missing priority class: %v, want an Invalid error naming the label and the class", err)
	}
}

func TestPrebuiltWorkloadIsUsed(t *testing.T) {
	q := newQueue(t, "4", false)
	prebuilt := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: q.ns, Name: cluster.Unique("prebuilt")},
		Spec: kueue.WorkloadSpec{QueueName: "lq", PodSets: newWorkloadPodSets()}}
	cluster.MustCreate(t, prebuilt)
	j := newJob(q.ns, "lq", 1, "1")
	j.Labels[kueue.PrebuiltWorkloadLabel] = prebuilt.Name
	cluster.MustCreate(t, j)
	waitJob(t, j, "to run", running)
	framework.Eventually(t, "the prebuilt Workload to be adopted and admitted", func(ctx context.Context) (bool, error) {
		wl := &kueue.Workload{}
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(prebuilt), wl); err != nil {
			return false, err
		}
		if owner := metav1.GetControllerOf(wl); owner == nil || owner.UID != j.UID {
			return false, fmt.Errorf("owner %+v", owner)
		}
		return true, framework.Admitted(wl)
	})
	list := &kueue.WorkloadList{}
	if err := cluster.Client.List(context.Background(), list, client.InNamespace(q.ns)); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Errorf("%d Workloads in the namespace, want only the prebuilt one", len(list.Items))
	}
}
