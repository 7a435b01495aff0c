package e2e

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	lws "sigs.k8s.io/lws/api/leaderworkerset/v1"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// The suite's sluice dev runs with --with jobset,lws,trainer,ray: the real
// JobSet, LeaderWorkerSet, Kubeflow trainer and KubeRay controllers, built
// from their modules by `make addons`; the first three serve their
// webhooks with certificates sluice dev provides.

// oneCPUTemplate is a pod template of one 1-CPU container running for
// runFor ("" keeps it running).
func oneCPUTemplate(runFor string) corev1.PodTemplateSpec {
	tmpl := podTemplate(nil, runFor)
	tmpl.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	return tmpl
}

// queuedJobSet is a JobSet in LocalQueue lq of two replicated 1-pod Jobs
// of 1 CPU each, running for runFor.
func queuedJobSet(ns, name, runFor string) *jobset.JobSet {
	return &jobset.JobSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{kueue.QueueNameLabel: "lq"}},
		Spec: jobset.JobSetSpec{ReplicatedJobs: []jobset.ReplicatedJob{{
			Name: "workers", Replicas: 2,
			Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](1), Completions: ptr.To[int32](1),
				Template: oneCPUTemplate(runFor)}},
		}}},
	}
}

// workloadOwnedBy returns the namespace's Workload owned by uid, or nil.
func workloadOwnedBy(ctx context.Context, c client.Client, ns string, uid types.UID) (*kueue.Workload, error) {
	list := &kueue.WorkloadList{}
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	for i := range list.Items {
		for _, ref := range list.Items[i].OwnerReferences {
			if ref.UID == uid {
				return &list.Items[i], nil
			}
		}
	}
	return nil, nil
}

// waitingForQuota waits until the Workload of obj waits for
// quota, and returns it.
func waitingForQuota(t *testing.T, c client.Client, ns string, obj client.Object) *kueue.Workload {
	t.Helper()
	var waiting *kueue.Workload
	eventually(t, "the Workload of "+obj.GetName()+" to wait for quota", func(ctx context.Context) (bool, error) {
		wl, err := workloadOwnedBy(ctx, c, ns, obj.GetUID())
		if err != nil || wl == nil {
			return false, err
		}
		waiting = wl
		cond := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
		return cond != nil && cond.Status == metav1.ConditionFalse && cond.Reason == kueue.ReasonWaitingForQuota, nil
	})
	return waiting
}

// podsWithinUsage tells whether the namespace's pods bound to nodes ask
// for no more of each resource than its ClusterQueue (named like it)
// has admitted: what KubeRay adds to the pods it makes is counted.
func podsWithinUsage(ctx context.Context, c client.Client, ns string) (bool, string, error) {
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(ns)); err != nil {
		return false, "", err
	}
	asked := corev1.ResourceList{}
	for i := range pods.Items {
		p := &pods.Items[i]
		// Bound to a node and not done: gated or pending pods hold nothing.
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		for _, container := range p.Spec.Containers {
			for name, q := range container.Resources.Requests {
				sum := asked[name]
				sum.Add(q)
				asked[name] = sum
			}
		}
	}
	cq := &kueue.ClusterQueue{}
	if err := c.Get(ctx, client.ObjectKey{Name: ns}, cq); err != nil {
		return false, "", err
	}
	admitted := corev1.ResourceList{}
	for _, fu := range cq.Status.FlavorsUsage {
		for _, r := range fu.Resources {
			sum := admitted[corev1.ResourceName(r.Name)]
			sum.Add(r.Total)
			admitted[corev1.ResourceName(r.Name)] = sum
		}
	}
	for name, q := range asked {
		if q.Cmp(admitted[name]) > 0 {
			held := admitted[name]
			return false, fmt.Sprintf("the pods ask for %s of %s, the ClusterQueue admitted %s", q.String(), name, held.String()), nil
		}
	}
	return true, "", nil
}

// expectPodsWithinUsage waits until the namespace's ClusterQueue reports
// at least admitted Workloads, then checks podsWithinUsage: what the other
// projects' controllers make is no more than sluice admitted.
func expectPodsWithinUsage(t *testing.T, c client.Client, ns string, admitted int32) {
	t.Helper()
	eventually(t, fmt.Sprintf("the ClusterQueue to report %d admissions", admitted), func(ctx context.Context) (bool, error) {
		cq := &kueue.ClusterQueue{}
		err := c.Get(ctx, client.ObjectKey{Name: ns}, cq)
		return cq.Status.AdmittedWorkloads >= admitted, err
	})
	if ok, why, err := podsWithinUsage(t.Context(), c, ns); err != nil || !ok {
		t.Errorf("%s (%v)", why, err)
	}
}

// firstRunsSecondWaits creates first, waits until it runs and checks its
// pods are within its admission, then creates second and waits until its
// Workload waits for quota, which it returns; second is read back.
func firstRunsSecondWaits(t *testing.T, c client.Client, ns string, first, second client.Object, what string, running func(context.Context) (bool, error)) *kueue.Workload {
	t.Helper()
	deleteAtCleanup(t, c, first, second)
	if err := c.Create(t.Context(), first); err != nil {
		t.Fatal(err)
	}
	eventually(t, what, running)
	expectPodsWithinUsage(t, c, ns, 1)
	if err := c.Create(t.Context(), second); err != nil {
		t.Fatal(err)
	}
	waiting := waitingForQuota(t, c, ns, second)
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(second), second); err != nil {
		t.Fatal(err)
	}
	return waiting
}

// deleteAtCleanup deletes objs when the test ends, passed or failed: the
// simulated nodes are shared by the suite, and a failed test's pods would
// take the room of the tests after it.
func deleteAtCleanup(t *testing.T, c client.Client, objs ...client.Object) {
	t.Cleanup(func() {
		for _, obj := range objs {
			if err := c.Delete(context.Background(), obj, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
				t.Logf("deleting %s: %v", obj.GetName(), err)
			}
		}
	})
}

// expectNoPods checks that no pod of the namespace has labels: a waiting
// job's controller made none.
func expectNoPods(t *testing.T, c client.Client, ns string, labels map[string]string, what string) {
	t.Helper()
	pods := &corev1.PodList{}
	if err := c.List(t.Context(), pods, client.InNamespace(ns), client.MatchingLabels(labels)); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 0 {
		t.Errorf("%s has %d pods, want none", what, len(pods.Items))
	}
}

func jobSetCompleted(ctx context.Context, c client.Client, js *jobset.JobSet) (bool, error) {
	if err := c.Get(ctx, client.ObjectKeyFromObject(js), js); err != nil {
		return false, err
	}
	if meta.IsStatusConditionTrue(js.Status.Conditions, string(jobset.JobSetFailed)) {
		return false, fmt.Errorf("JobSet %s failed", js.Name)
	}
	return meta.IsStatusConditionTrue(js.Status.Conditions, string(jobset.JobSetCompleted)), nil
}

// Two JobSets of two 1-CPU pods in a 3-CPU queue, run by the JobSet
// controller: the first runs; the second waits suspended, with its
// Workload pending and no pod; when the first completes the second runs
// and completes, and the queue ends empty.
func TestJobSetsWaitRunAndCompleteWithTheJobSetController(t *testing.T) {
	c := sharedClient(t)
	const ns = "e2e-jobset"
	e2eQueue(t, c, ns, "on-demand", "3")
	first, second := queuedJobSet(ns, "first", "10s"), queuedJobSet(ns, "second", "2s")
	firstRunsSecondWaits(t, c, ns, first, second, "the first JobSet's two pods to run", func(ctx context.Context) (bool, error) {
		running, _, err := podCounts(ctx, c, ns, map[string]string{jobset.JobSetNameKey: first.Name})
		return running == 2, err
	})
	// While it waits, it is suspended and none of its pods exists.
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(second), second); err != nil {
		t.Fatal(err)
	}
	if !ptr.Deref(second.Spec.Suspend, false) {
		t.Errorf("the waiting JobSet is not suspended")
	}
	expectNoPods(t, c, ns, map[string]string{jobset.JobSetNameKey: second.Name}, "the waiting JobSet")
	for _, js := range []*jobset.JobSet{first, second} {
		eventually(t, "JobSet "+js.Name+" to complete", func(ctx context.Context) (bool, error) {
			return jobSetCompleted(ctx, c, js)
		})
		wl, err := workloadOwnedBy(t.Context(), c, ns, js.UID)
		if err != nil || wl == nil {
			t.Fatalf("the Workload of JobSet %s: %v %v", js.Name, wl, err)
		}
		if !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted) &&
			!meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
			t.Errorf("JobSet %s completed without an admitted Workload: %+v", js.Name, wl.Status.Conditions)
		}
	}
	eventually(t, "the queue to be empty", func(ctx context.Context) (bool, error) { return queueIsEmpty(ctx, c, ns) })
}

// scaleLWS sets a LeaderWorkerSet's replicas as `kubectl scale` would.
func scaleLWS(t *testing.T, c client.Client, set *lws.LeaderWorkerSet, replicas int32) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(set), set); err != nil {
			return err
		}
		set.Spec.Replicas = ptr.To(replicas)
		return c.Update(t.Context(), set)
	})
	if err != nil {
		t.Fatalf("scaling LeaderWorkerSet %s to %d: %v", set.Name, replicas, err)
	}
}

// groupPods counts a LeaderWorkerSet's pods by group index: running, and
// waiting at sluice's gate.
func groupPods(ctx context.Context, c client.Client, set *lws.LeaderWorkerSet) (running, gated map[int]int, err error) {
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(set.Namespace), client.MatchingLabels{lws.SetNameLabelKey: set.Name}); err != nil {
		return nil, nil, err
	}
	running, gated = map[int]int{}, map[int]int{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		group, err := strconv.Atoi(p.Labels[lws.GroupIndexLabelKey])
		if err != nil {
			return nil, nil, fmt.Errorf("pod %s has no group index: %w", p.Name, err)
		}
		switch {
		case gatedBySluice(&p):
			gated[group]++
		case p.Status.Phase == corev1.PodRunning:
			running[group]++
		}
	}
	return running, gated, nil
}

func sameCounts(got, want map[int]int) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// A LeaderWorkerSet of 2-CPU groups (a leader and a worker of 1 CPU each)
// in a 4-CPU queue, run by the LeaderWorkerSet controller: one group runs;
// scaled to three groups, one new group runs and the other waits whole at
// sluice's gate; scaled back to one, the removed groups give their quota
// back; scaled to two again, the new second group runs.
func TestLeaderWorkerSetGroupsQueueAndScaleWithTheLWSController(t *testing.T) {
	c := sharedClient(t)
	const ns = "e2e-lws"
	e2eQueue(t, c, ns, "on-demand", "4")
	tmpl := oneCPUTemplate("")
	tmpl.Spec.RestartPolicy = corev1.RestartPolicyAlways
	set := &lws.LeaderWorkerSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "serving", Labels: map[string]string{kueue.QueueNameLabel: "lq"}},
		Spec: lws.LeaderWorkerSetSpec{Replicas: ptr.To[int32](1),
			// What the CRD defaults when a manifest leaves them out.
			RolloutStrategy:      lws.RolloutStrategy{Type: lws.RollingUpdateStrategyType},
			StartupPolicy:        lws.LeaderCreatedStartupPolicy,
			LeaderWorkerTemplate: lws.LeaderWorkerTemplate{Size: ptr.To[int32](2), WorkerTemplate: tmpl}},
	}
	if err := c.Create(t.Context(), set); err != nil {
		t.Fatal(err)
	}
	waitGroups := func(what string, wantRunning, wantGated map[int]int) {
		t.Helper()
		eventually(t, what, func(ctx context.Context) (bool, error) {
			running, gated, err := groupPods(ctx, c, set)
			return err == nil && sameCounts(running, wantRunning) && sameCounts(gated, wantGated), err
		})
	}
	waitGroups("group 0 to run", map[int]int{0: 2}, nil)
	expectPodsWithinUsage(t, c, ns, 1)

	scaleLWS(t, c, set, 3)
	// Groups 1 and 2 are made at once: either may be the one admitted.
	eventually(t, "one new group to run and the other to wait whole", func(ctx context.Context) (bool, error) {
		running, gated, err := groupPods(ctx, c, set)
		if err != nil {
			return false, err
		}
		return sameCounts(running, map[int]int{0: 2, 1: 2}) && sameCounts(gated, map[int]int{2: 2}) ||
			sameCounts(running, map[int]int{0: 2, 2: 2}) && sameCounts(gated, map[int]int{1: 2}), nil
	})
	cq := &kueue.ClusterQueue{}
	eventually(t, "the queue to count 1 pending and 2 admitted Workloads", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Name: ns}, cq); err != nil {
			return false, err
		}
		return cq.Status.PendingWorkloads == 1 && cq.Status.AdmittedWorkloads == 2, nil
	})

	scaleLWS(t, c, set, 1)
	waitGroups("only group 0 to remain", map[int]int{0: 2}, nil)
	eventually(t, "the queue to hold group 0 alone", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Name: ns}, cq); err != nil {
			return false, err
		}
		return cq.Status.PendingWorkloads == 0 && cq.Status.ReservingWorkloads == 1, nil
	})

	scaleLWS(t, c, set, 2)
	waitGroups("the new group 1 to run", map[int]int{0: 2, 1: 2}, nil)

	// The simulated nodes are shared by the suite: give their room back.
	if err := c.Delete(t.Context(), set); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the LeaderWorkerSet's Pods to be gone", func(ctx context.Context) (bool, error) {
		pods := &corev1.PodList{}
		err := c.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{lws.SetNameLabelKey: set.Name})
		return err == nil && len(pods.Items) == 0, err
	})
	eventually(t, "the queue to be empty", func(ctx context.Context) (bool, error) { return queueIsEmpty(ctx, c, ns) })
}
