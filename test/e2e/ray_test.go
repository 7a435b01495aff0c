package e2e

import (
	"context"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// KubeRay's operator (v1.5, --with ray) makes the Ray clusters' pods and
// reports what they do: sluice queues RayClusters and RayJobs, starts them
// by unsuspending them, and takes the quota back when KubeRay says the
// pods are gone.

// queuedRaySpec is a Ray cluster of a 1-CPU head and one 1-CPU worker.
func queuedRaySpec() *rayv1.RayClusterSpec {
	return &rayv1.RayClusterSpec{
		HeadGroupSpec: rayv1.HeadGroupSpec{RayStartParams: map[string]string{}, Template: oneCPUTemplate("")},
		WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{
			GroupName: "workers", Replicas: ptr.To[int32](1), MinReplicas: ptr.To[int32](1), MaxReplicas: ptr.To[int32](1),
			RayStartParams: map[string]string{}, Template: oneCPUTemplate(""),
		}},
	}
}

func queuedRayCluster(ns, name string) *rayv1.RayCluster {
	return &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{kueue.QueueNameLabel: "lq"}},
		Spec:       *queuedRaySpec(),
	}
}

// runningLabelled counts the namespace's running pods matching labels.
func runningLabelled(ctx context.Context, c client.Client, ns string, labels map[string]string) (int, error) {
	running, _, err := podCounts(ctx, c, ns, labels)
	return running, err
}

// Two RayClusters of 2 CPUs in a 3-CPU queue, run by KubeRay: the first's
// head and worker run; the second waits suspended with no pod. Its
// Workload deactivated, the first is suspended by sluice, KubeRay deletes
// its pods and reports RayClusterSuspended, and the second runs.
func TestRayClustersWaitRunAndStopWithKubeRay(t *testing.T) {
	c := sharedClient(t)
	const ns = "e2e-raycluster"
	e2eQueue(t, c, ns, "on-demand", "3")
	first, second := queuedRayCluster(ns, "first"), queuedRayCluster(ns, "second")
	firstPods := map[string]string{"ray.io/cluster": first.Name}
	waiting := firstRunsSecondWaits(t, c, ns, first, second, "the first RayCluster's head and worker to run", func(ctx context.Context) (bool, error) {
		running, err := runningLabelled(ctx, c, ns, firstPods)
		return running == 2, err
	})
	if len(waiting.Spec.PodSets) != 2 || waiting.Spec.PodSets[0].Name != "head" || waiting.Spec.PodSets[1].Name != "workers" {
		t.Errorf("the waiting Workload's pod sets %+v, want head and workers", waiting.Spec.PodSets)
	}
	if !ptr.Deref(second.Spec.Suspend, false) {
		t.Errorf("the waiting RayCluster is not suspended")
	}
	expectNoPods(t, c, ns, map[string]string{"ray.io/cluster": second.Name}, "the waiting RayCluster")

	firstWorkload, err := workloadOwnedBy(t.Context(), c, ns, first.UID)
	if err != nil || firstWorkload == nil {
		t.Fatalf("the first RayCluster's Workload: %v, %v", firstWorkload, err)
	}
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(firstWorkload), firstWorkload); err != nil {
			return err
		}
		firstWorkload.Spec.Active = ptr.To(false)
		return c.Update(t.Context(), firstWorkload)
	}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "KubeRay to report the first RayCluster suspended, its pods gone", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(first), first); err != nil {
			return false, err
		}
		running, err := runningLabelled(ctx, c, ns, firstPods)
		return running == 0 && meta.IsStatusConditionTrue(first.Status.Conditions, string(rayv1.RayClusterSuspended)), err
	})
	eventually(t, "the second RayCluster's head and worker to run", func(ctx context.Context) (bool, error) {
		running, err := runningLabelled(ctx, c, ns, map[string]string{"ray.io/cluster": second.Name})
		return running == 2, err
	})
	for _, rc := range []*rayv1.RayCluster{first, second} {
		if err := c.Delete(t.Context(), rc); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "the queue to be empty", func(ctx context.Context) (bool, error) { return queueIsEmpty(ctx, c, ns) })
}

// queuedRayJob is a RayJob of the cluster above and a half-CPU submitter
// running for submitFor.
func queuedRayJob(ns, name, submitFor string) *rayv1.RayJob {
	submitter := podTemplate(nil, submitFor)
	return &rayv1.RayJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{kueue.QueueNameLabel: "lq"}},
		Spec: rayv1.RayJobSpec{
			Entrypoint: "python -c 'import ray; ray.init()'", ShutdownAfterJobFinishes: true,
			SubmitterPodTemplate: &submitter, RayClusterSpec: queuedRaySpec(),
		},
	}
}

// Two RayJobs of 2.5 CPUs (head, worker, submitter) in a 4-CPU queue, run
// by KubeRay: the second waits suspended, KubeRay making no cluster for
// it. The first's submitter ends; with no Ray behind the simulated pods,
// KubeRay's dashboard never reports the job, and KubeRay ends the RayJob
// itself (Failed, 30 s after its submitter): its Workload finishes, KubeRay
// deletes its cluster, and the second runs.
func TestRayJobsWaitRunAndFinishWithKubeRay(t *testing.T) {
	c := sharedClient(t)
	const ns = "e2e-rayjob"
	e2eQueue(t, c, ns, "on-demand", "4")
	first, second := queuedRayJob(ns, "first", "1s"), queuedRayJob(ns, "second", "")
	waiting := firstRunsSecondWaits(t, c, ns, first, second, "the first RayJob's cluster and submitter to run", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(first), first); err != nil || first.Status.RayClusterName == "" {
			return false, err
		}
		cluster, err := runningLabelled(ctx, c, ns, map[string]string{"ray.io/cluster": first.Status.RayClusterName})
		if err != nil || cluster != 2 {
			return false, err
		}
		// The submitter ran, or still runs.
		pods := &corev1.PodList{}
		if err := c.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"job-name": first.Name}); err != nil {
			return false, err
		}
		return len(pods.Items) == 1, nil
	})
	if len(waiting.Spec.PodSets) != 3 || waiting.Spec.PodSets[2].Name != "submitter" {
		t.Errorf("the waiting Workload's pod sets %+v, want head, workers and submitter", waiting.Spec.PodSets)
	}
	if !second.Spec.Suspend || second.Status.RayClusterName != "" {
		t.Errorf("the waiting RayJob: suspend %v, cluster %q; want suspended with no cluster", second.Spec.Suspend, second.Status.RayClusterName)
	}

	eventually(t, "the first RayJob's Workload to finish as KubeRay ends it", func(ctx context.Context) (bool, error) {
		wl, err := workloadOwnedBy(ctx, c, ns, first.UID)
		return wl != nil && meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished), err
	})
	eventually(t, "the second RayJob's cluster and submitter to run", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(second), second); err != nil || second.Status.RayClusterName == "" {
			return false, err
		}
		cluster, err := runningLabelled(ctx, c, ns, map[string]string{"ray.io/cluster": second.Status.RayClusterName})
		if err != nil || cluster != 2 {
			return false, err
		}
		submitter, err := runningLabelled(ctx, c, ns, map[string]string{"job-name": second.Name})
		return submitter == 1, err
	})
	eventually(t, "KubeRay to delete the first RayJob's cluster", func(ctx context.Context) (bool, error) {
		running, err := runningLabelled(ctx, c, ns, map[string]string{"ray.io/cluster": first.Status.RayClusterName})
		return running == 0, err
	})
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(first), first); err != nil {
		t.Fatal(err)
	}
	if first.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusFailed {
		t.Errorf("the first RayJob's deployment status %q, want Failed (no Ray answers KubeRay's dashboard client)", first.Status.JobDeploymentStatus)
	}
	if err := c.Delete(t.Context(), second); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the queue to be empty", func(ctx context.Context) (bool, error) { return queueIsEmpty(ctx, c, ns) })
}

// KubeRay adds containers to the head pods it makes: the autoscaler of an
// autoscaling cluster, and the submitter of a SidecarMode RayJob. Run by
// the real operator, their pods ask for no more than their Workloads
// hold, and the SidecarMode RayJob's cluster is the RayJob's, not a
// second Workload.
func TestRayPodsAskNoMoreThanTheirAdmission(t *testing.T) {
	c := sharedClient(t)
	const ns = "e2e-ray-heads"
	e2eQueueOf(t, c, ns, "on-demand", corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("4Gi")})
	autoscaling := queuedRayCluster(ns, "autoscaling")
	autoscaling.Spec.EnableInTreeAutoscaling = ptr.To(true)
	autoscaling.Spec.WorkerGroupSpecs[0].MaxReplicas = ptr.To[int32](2)
	sidecar := queuedRayJob(ns, "sidecar", "")
	sidecar.Spec.SubmissionMode, sidecar.Spec.SubmitterPodTemplate = rayv1.SidecarMode, nil
	deleteAtCleanup(t, c, autoscaling, sidecar)
	for _, obj := range []client.Object{autoscaling, sidecar} {
		if err := c.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "both Ray clusters' heads and workers to run", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(sidecar), sidecar); err != nil || sidecar.Status.RayClusterName == "" {
			return false, err
		}
		running, err := runningLabelled(ctx, c, ns, nil)
		return running == 4, err
	})
	expectPodsWithinUsage(t, c, ns, 2)
	list := &kueue.WorkloadList{}
	if err := c.List(t.Context(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 2 {
		var names []string
		for _, wl := range list.Items {
			names = append(names, wl.Name)
		}
		t.Errorf("Workloads %v, want one for the RayCluster and one for the RayJob", names)
	}
	for _, obj := range []client.Object{autoscaling, sidecar} {
		if err := c.Delete(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "the queue to be empty", func(ctx context.Context) (bool, error) { return queueIsEmpty(ctx, c, ns) })
}
