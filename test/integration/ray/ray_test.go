package ray

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
	"github.com/sluicehq/sluice/internal/integration/ray"
	"github.com/sluicehq/sluice/test/integration/framework"
)

func podSetsOf(wl *kueue.Workload) string {
	var sets []string
	for _, ps := range wl.Spec.PodSets {
		sets = append(sets, fmt.Sprintf("%s=%d", ps.Name, ps.Count))
	}
	return strings.Join(sets, ",")
}

func TestRayJobIsQueuedWithItsClusterAndSubmitter(t *testing.T) {
	ns, flavor := newQueue(t, "4")
	rj := newRayJob(ns, "lq")
	cluster.MustCreate(t, rj)
	if !rj.Spec.Suspend {
		t.Fatal("the webhook did not create the queued RayJob suspended")
	}
	wl := cluster.WaitWorkload(t, workloadOf(rj, ray.JobKind), "to be admitted", framework.Admitted)
	if got := podSetsOf(wl); got != "head=1,workers=2,submitter=1" {
		t.Errorf("pod sets %s, want head=1,workers=2,submitter=1", got)
	}
	started := waitFor(t, rj, "to run", func(rj *rayv1.RayJob) error {
		if rj.Spec.Suspend {
			return fmt.Errorf("suspended")
		}
		return nil
	})
	spec := started.Spec.RayClusterSpec
	for name, tmpl := range map[string]corev1.PodTemplateSpec{"head": spec.HeadGroupSpec.Template, "workers": spec.WorkerGroupSpecs[0].Template,
		"submitter": *started.Spec.SubmitterPodTemplate} {
		if tmpl.Spec.NodeSelector["pool"] != flavor {
			t.Errorf("%s: nodeSelector %v, want the flavor's pool", name, tmpl.Spec.NodeSelector)
		}
	}
}

// Without a submitter template, KubeRay runs its default submitter (half a
// CPU, 200Mi): the Workload counts it, memory included, and writes no
// template into the RayJob.
func TestDefaultSubmitterIsCounted(t *testing.T) {
	ns, _ := newQueue(t, "4")
	rj := newRayJob(ns, "lq")
	rj.Spec.SubmitterPodTemplate = nil
	cluster.MustCreate(t, rj)
	wl := cluster.WaitWorkload(t, workloadOf(rj, ray.JobKind), "to exist", func(*kueue.Workload) error { return nil })
	requests := wl.Spec.PodSets[2].Template.Spec.Containers[0].Resources.Requests
	if wl.Spec.PodSets[2].Name != ray.SubmitterPodSet || requests.Cpu().String() != "500m" || requests.Memory().String() != "200Mi" {
		t.Fatalf("pod set %s requests %v, want the submitter with KubeRay's 500m and 200Mi", wl.Spec.PodSets[2].Name, requests)
	}
	// The ClusterQueue has no memory quota: the submitter can't be placed.
	cluster.WaitPending(t, wl, "NoMatchingFlavor", "podSet submitter", "memory")
	if got := waitFor(t, rj, "to stay suspended", func(*rayv1.RayJob) error { return nil }); got.Spec.SubmitterPodTemplate != nil || !got.Spec.Suspend {
		t.Errorf("suspend %v, submitter template %+v", got.Spec.Suspend, got.Spec.SubmitterPodTemplate)
	}
}

func TestRayJobWaitsUntilItFits(t *testing.T) {
	ns, _ := newQueue(t, "3")
	rj := newRayJob(ns, "lq")
	cluster.MustCreate(t, rj)
	wl := cluster.WaitWorkload(t, workloadOf(rj, ray.JobKind), "to exist", func(*kueue.Workload) error { return nil })
	// 3 CPU for the cluster and half a CPU for the submitter: it waits.
	cluster.WaitPending(t, wl, kueue.ReasonExceedsMaxQuota)
}

func TestRayJobFinishesItsWorkload(t *testing.T) {
	for _, tc := range []struct {
		name       string
		deployment rayv1.JobDeploymentStatus
		job        rayv1.JobStatus
		reason     string
	}{
		{"succeeded", rayv1.JobDeploymentStatusComplete, rayv1.JobStatusSucceeded, integration.FinishedReasonSucceeded},
		{"job failed", rayv1.JobDeploymentStatusComplete, rayv1.JobStatusFailed, integration.FinishedReasonFailed},
		{"deployment failed", rayv1.JobDeploymentStatusFailed, "", integration.FinishedReasonFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns, _ := newQueue(t, "4")
			rj := newRayJob(ns, "lq")
			cluster.MustCreate(t, rj)
			waitFor(t, rj, "to run", func(rj *rayv1.RayJob) error {
				if rj.Spec.Suspend {
					return fmt.Errorf("suspended")
				}
				return nil
			})
			setStatus(t, rj, func(current *rayv1.RayJob) {
				current.Status.JobDeploymentStatus, current.Status.JobStatus, current.Status.Message = tc.deployment, tc.job, "the end"
			})
			cluster.WaitWorkload(t, workloadOf(rj, ray.JobKind), "to finish", framework.ConditionIs(kueue.WorkloadFinished, metav1.ConditionTrue, tc.reason, "the end"))
		})
	}
}

func TestRayJobWebhookRules(t *testing.T) {
	ns, _ := newQueue(t, "4")
	for _, tc := range []struct {
		name   string
		mutate func(*rayv1.RayJob)
		want   string
	}{
		{"an existing cluster", func(rj *rayv1.RayJob) { rj.Spec.ClusterSelector = map[string]string{"ray.io/cluster": "shared"} }, "spec.clusterSelector: Forbidden"},
		{"autoscaling without a bound", func(rj *rayv1.RayJob) {
			rj.Spec.RayClusterSpec.EnableInTreeAutoscaling = ptr.To(true)
			rj.Spec.RayClusterSpec.WorkerGroupSpecs[0].MaxReplicas = nil
		}, "spec.rayClusterSpec.workerGroupSpecs[0].maxReplicas: Required"},
		{"a cluster outliving the job", func(rj *rayv1.RayJob) { rj.Spec.ShutdownAfterJobFinishes = false }, "spec.shutdownAfterJobFinishes: Invalid value: false"},
		{"more worker groups than a Workload holds", func(rj *rayv1.RayJob) {
			for i := range 6 {
				wg := rj.Spec.RayClusterSpec.WorkerGroupSpecs[0]
				wg.GroupName = fmt.Sprintf("extra%d", i)
				rj.Spec.RayClusterSpec.WorkerGroupSpecs = append(rj.Spec.RayClusterSpec.WorkerGroupSpecs, wg)
			}
		}, "spec.rayClusterSpec.workerGroupSpecs: Too many: 7: must have at most 6 items"},
		{"group names equal in lower case", func(rj *rayv1.RayJob) {
			wg := rj.Spec.RayClusterSpec.WorkerGroupSpecs[0]
			wg.GroupName = "workers"
			rj.Spec.RayClusterSpec.WorkerGroupSpecs = append(rj.Spec.RayClusterSpec.WorkerGroupSpecs, wg)
		}, "spec.rayClusterSpec.workerGroupSpecs[1].groupName: Duplicate value"},
		{"a pod count beyond int32", func(rj *rayv1.RayJob) {
			rj.Spec.RayClusterSpec.WorkerGroupSpecs[0].Replicas = ptr.To(int32(2000000))
			rj.Spec.RayClusterSpec.WorkerGroupSpecs[0].MaxReplicas = ptr.To(int32(2000000))
			rj.Spec.RayClusterSpec.WorkerGroupSpecs[0].NumOfHosts = 2000
		}, "replicas times numOfHosts must not exceed"},
		{"a standalone worker template", func(rj *rayv1.RayJob) {
			rj.Spec.RayClusterSpec.WorkerGroupSpecs[0].Template.Annotations = map[string]string{kueue.StandaloneAnnotation: "true"}
		}, "pods of a queued RayJob are already counted by its Workload"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rj := newRayJob(ns, "lq")
			tc.mutate(rj)
			err := cluster.Client.Create(context.Background(), rj)
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("create: %v, want Invalid with %q", err, tc.want)
			}
		})
	}
	// None of these rules bind a RayJob sluice does not queue.
	free := newRayJob(ns, "")
	free.Spec.ClusterSelector = map[string]string{"ray.io/cluster": "shared"}
	free.Spec.ShutdownAfterJobFinishes = false
	other := cluster.Unique("unmanaged")
	cluster.MustCreate(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: other}})
	free.Namespace = other
	cluster.MustCreate(t, free)
}

// In SidecarMode KubeRay runs the submitter as a container of the head pod
// (its default: 500m CPU, 200Mi): the head pod set counts it, memory
// included, and there is no submitter pod set. The cluster KubeRay makes,
// the submitter in its head, is the RayJob's, not queued on its own (under
// the real operator it was, and counted twice).
func TestSidecarModeSubmitterIsCountedInTheHead(t *testing.T) {
	ns, _ := newQueue(t, "4")
	rj := newRayJob(ns, "lq")
	rj.Spec.SubmissionMode, rj.Spec.SubmitterPodTemplate = rayv1.SidecarMode, nil
	cluster.MustCreate(t, rj)
	wl := cluster.WaitWorkload(t, workloadOf(rj, ray.JobKind), "to exist", func(*kueue.Workload) error { return nil })
	if got := podSetsOf(wl); got != "head=1,workers=2" {
		t.Errorf("pod sets %s, want head=1,workers=2", got)
	}
	head := wl.Spec.PodSets[0].Template.Spec.Containers
	if len(head) != 2 || head[1].Resources.Requests.Cpu().String() != "500m" || head[1].Resources.Requests.Memory().String() != "200Mi" {
		t.Errorf("head containers %+v, want the head's and KubeRay's submitter", head)
	}
	// The ClusterQueue has no memory quota: the head can't be placed.
	cluster.WaitPending(t, wl, "NoMatchingFlavor", "podSet head", "memory")

	rc := kubeRayCluster(t, rj)
	rc.Labels = map[string]string{kueue.QueueNameLabel: "lq"}
	rc.Spec.HeadGroupSpec.Template.Spec.Containers = append(rc.Spec.HeadGroupSpec.Template.Spec.Containers, corev1.Container{
		Name: "ray-job-submitter", Image: "ray", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("200Mi")}}})
	cluster.MustCreate(t, rc)
	if ptr.Deref(rc.Spec.Suspend, false) {
		t.Fatal("the webhook suspended the SidecarMode RayJob's RayCluster")
	}
	cluster.NoWorkloadOf(t, rc, "lq")
}

// The RayCluster KubeRay creates for a queued RayJob is the RayJob's: its
// Workload counts it.
func TestRayClusterOfARayJobIsLeftToIt(t *testing.T) {
	ns, _ := newQueue(t, "4")
	rj := newRayJob(ns, "lq")
	cluster.MustCreate(t, rj)
	rc := kubeRayCluster(t, rj)
	rc.Labels = map[string]string{kueue.QueueNameLabel: "lq"}
	cluster.MustCreate(t, rc)
	if ptr.Deref(rc.Spec.Suspend, false) {
		t.Fatal("the webhook suspended a RayJob's RayCluster")
	}
	cluster.NoWorkloadOf(t, rc, "lq")
}

// Only what KubeRay makes for a RayJob is the RayJob's: a RayCluster
// other than the one its status names, or larger than its rayClusterSpec,
// and a Job other than its submitter are queued as if they had no owner.
func TestOnlyWhatKubeRayMakesIsLeftToARayJob(t *testing.T) {
	ns, _ := newQueue(t, "8")
	rj := startRayJob(t, newRayJob(ns, "lq"))
	owner := []metav1.OwnerReference{*metav1.NewControllerRef(rj, rayv1.SchemeGroupVersion.WithKind("RayJob"))}
	other := newRayCluster(ns, "lq")
	other.OwnerReferences = owner
	larger := kubeRayCluster(t, rj)
	larger.Labels = map[string]string{kueue.QueueNameLabel: "lq"}
	larger.Spec.WorkerGroupSpecs[0].Replicas = ptr.To(int32(3))
	for what, rc := range map[string]*rayv1.RayCluster{"another cluster": other, "a larger cluster": larger} {
		cluster.MustCreate(t, rc)
		if !ptr.Deref(rc.Spec.Suspend, false) {
			t.Errorf("%s naming a RayJob as its controller ran as the RayJob's, outside its queue", what)
		}
	}
	job := framework.Job(ns, cluster.Unique("submitter"), "lq", 1, "500m")
	job.OwnerReferences = owner
	cluster.MustCreate(t, job)
	if !ptr.Deref(job.Spec.Suspend, false) {
		t.Error("a Job named otherwise than the RayJob's submitter ran as the RayJob's, outside its queue")
	}
}

// A RayCluster queued on its own: admitted whole, stopped on eviction and
// its quota given back once KubeRay reports it suspended.
func TestRayClusterIsQueuedAndEvicted(t *testing.T) {
	ns, flavor := newQueue(t, "3")
	rc := newRayCluster(ns, "lq")
	cluster.MustCreate(t, rc)
	wl := cluster.WaitWorkload(t, workloadOf(rc, ray.ClusterKind), "to be admitted", framework.Admitted)
	if got := podSetsOf(wl); got != "head=1,workers=2" {
		t.Errorf("pod sets %s, want head=1,workers=2", got)
	}
	started := waitFor(t, rc, "to run", running)
	if started.Spec.WorkerGroupSpecs[0].Template.Spec.NodeSelector["pool"] != flavor {
		t.Errorf("workers nodeSelector %v", started.Spec.WorkerGroupSpecs[0].Template.Spec.NodeSelector)
	}
	setStatus(t, rc, func(current *rayv1.RayCluster) {
		meta.SetStatusCondition(&current.Status.Conditions, metav1.Condition{Type: string(rayv1.HeadPodReady), Status: metav1.ConditionTrue, Reason: rayv1.HeadPodRunningAndReady})
	})
	framework.Update(t, cluster.Client, wl, func() { wl.Spec.Active = ptr.To(false) })
	waitFor(t, rc, "to be suspended", suspended)
	cluster.WaitWorkload(t, wl, "to hold its quota while the cluster runs", func(wl *kueue.Workload) error {
		if !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted) || wl.Status.Admission == nil {
			return fmt.Errorf("evicted %v, admission %v", meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted), wl.Status.Admission != nil)
		}
		return nil
	})
	setStatus(t, rc, func(current *rayv1.RayCluster) {
		meta.SetStatusCondition(&current.Status.Conditions, metav1.Condition{Type: string(rayv1.RayClusterSuspended), Status: metav1.ConditionTrue, Reason: "Suspended"})
	})
	cluster.WaitWorkload(t, wl, "to give its quota back", func(wl *kueue.Workload) error {
		if wl.Status.Admission != nil {
			return fmt.Errorf("still admitted")
		}
		return nil
	})
	waitFor(t, rc, "to be restored", func(rc *rayv1.RayCluster) error {
		if _, ok := rc.Spec.WorkerGroupSpecs[0].Template.Spec.NodeSelector["pool"]; ok {
			return fmt.Errorf("keeps the flavor's nodeSelector")
		}
		return nil
	})
}

// More workers on a running RayCluster suspend it in the same update.
func TestScaledRunningRayClusterStopsAndRequeues(t *testing.T) {
	ns, _ := newQueue(t, "3")
	rc := newRayCluster(ns, "lq")
	cluster.MustCreate(t, rc)
	started := waitFor(t, rc, "to run", running)
	started.Spec.WorkerGroupSpecs[0].Replicas = ptr.To(int32(4))
	if err := cluster.Client.Update(context.Background(), started); err != nil {
		t.Fatal(err)
	}
	if !ptr.Deref(started.Spec.Suspend, false) {
		t.Fatal("a running RayCluster scaled up was not suspended in the same update")
	}
	waitRequeued(t, workloadOf(rc, ray.ClusterKind), "head=1,workers=4")
}

// An autoscaling RayCluster is admitted for its groups' maxReplicas and
// for the autoscaler container KubeRay adds to its head (here of the
// resources its autoscalerOptions give); the autoscaler moves its replicas
// within them without stopping it, and a raised maxReplicas suspends it in
// the same update.
func TestAutoscalingRayClusterScalesWithinItsAdmission(t *testing.T) {
	ns, _ := newQueue(t, "5500m")
	rc := newRayCluster(ns, "lq")
	rc.Spec.EnableInTreeAutoscaling = ptr.To(true)
	halfCPU := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}
	rc.Spec.AutoscalerOptions = &rayv1.AutoscalerOptions{Resources: &corev1.ResourceRequirements{Requests: halfCPU, Limits: halfCPU}}
	cluster.MustCreate(t, rc)
	wl := cluster.WaitWorkload(t, workloadOf(rc, ray.ClusterKind), "to be admitted at maxReplicas", func(wl *kueue.Workload) error {
		if podSetsOf(wl) != "head=1,workers=4" {
			return fmt.Errorf("pod sets %s", podSetsOf(wl))
		}
		return framework.Admitted(wl)
	})
	if head := wl.Spec.PodSets[0].Template.Spec.Containers; len(head) != 2 || !head[1].Resources.Requests.Cpu().Equal(resource.MustParse("500m")) {
		t.Errorf("the head pod set's containers %+v, want the head's and the autoscaler's 500m", head)
	}
	started := waitFor(t, rc, "to run", running)
	for _, replicas := range []int32{4, 1} {
		framework.Update(t, cluster.Client, started, func() { started.Spec.WorkerGroupSpecs[0].Replicas = ptr.To(replicas) })
		if ptr.Deref(started.Spec.Suspend, false) {
			t.Fatalf("the autoscaler's %d replicas, within maxReplicas, suspended the cluster", replicas)
		}
	}
	framework.Update(t, cluster.Client, started, func() { started.Spec.WorkerGroupSpecs[0].MaxReplicas = ptr.To(int32(6)) })
	if !ptr.Deref(started.Spec.Suspend, false) {
		t.Fatal("a running autoscaling RayCluster given a larger maxReplicas was not suspended in the same update")
	}
	waitRequeued(t, wl, "head=1,workers=6")
}

// waitRequeued waits until the Workload queues again, unadmitted, with
// the pod sets it grew to, and then waits for quota it can never have.
func waitRequeued(t *testing.T, wl *kueue.Workload, podSets string) {
	t.Helper()
	wl = cluster.WaitWorkload(t, wl, "to queue again as "+podSets, func(wl *kueue.Workload) error {
		if wl.Status.Admission != nil || podSetsOf(wl) != podSets {
			return fmt.Errorf("admission %v, pod sets %s", wl.Status.Admission != nil, podSetsOf(wl))
		}
		return nil
	})
	cluster.WaitPending(t, wl, kueue.ReasonExceedsMaxQuota)
}

// The standalone variants: a worker pod of a RayJob's cluster opting in
// alone is ignored under a queued RayJob (the walk goes through the
// RayCluster to the RayJob) and queued alone under an unqueued one.
func TestStandaloneWorkerPodOfAQueuedRayJobIsIgnored(t *testing.T) {
	ns, _ := newQueue(t, "4")
	rj := newRayJob(ns, "lq")
	cluster.MustCreate(t, rj)
	rc := kubeRayCluster(t, rj)
	cluster.MustCreate(t, rc)
	pod := workerPod(ns, rc)
	cluster.MustCreate(t, pod)
	if len(pod.Spec.SchedulingGates) > 0 {
		t.Fatalf("a standalone worker pod of a queued RayJob was gated: %v", pod.Spec.SchedulingGates)
	}
	waitEvent(t, pod, integration.EventStandaloneUnderQueuedParent, "RayJob "+rj.Name)
}

func TestStandaloneWorkerPodOfAnUnqueuedRayJobIsQueuedAlone(t *testing.T) {
	ns, _ := newQueue(t, "4")
	rj := newRayJob(ns, "")
	cluster.MustCreate(t, rj)
	rc := kubeRayCluster(t, rj)
	cluster.MustCreate(t, rc)
	pod := workerPod(ns, rc)
	cluster.MustCreate(t, pod)
	if len(pod.Spec.SchedulingGates) == 0 || pod.Labels[kueue.ManagedLabel] != "true" {
		t.Fatalf("a standalone worker pod of an unqueued RayJob was not queued: gates %v labels %v", pod.Spec.SchedulingGates, pod.Labels)
	}
	waitFor(t, pod, "to be admitted alone", func(p *corev1.Pod) error {
		if len(p.Spec.SchedulingGates) > 0 {
			return fmt.Errorf("gated")
		}
		return nil
	})
}

// workerPod is a worker pod of the cluster, as KubeRay would create it,
// opting in alone to LocalQueue lq.
func workerPod(ns string, rc *rayv1.RayCluster) *corev1.Pod {
	tmpl := podTemplate("1")
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster.Unique("worker"),
		Labels:          map[string]string{kueue.QueueNameLabel: "lq", "ray.io/cluster": rc.Name},
		Annotations:     map[string]string{kueue.StandaloneAnnotation: "true"},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rc, rayv1.SchemeGroupVersion.WithKind("RayCluster"))}},
		Spec: tmpl.Spec}
}

// More workers on a running RayJob's cluster suspend it in the same
// update; it queues again at its new size.
func TestGrownRunningRayJobStopsAndRequeues(t *testing.T) {
	ns, _ := newQueue(t, "4")
	rj := newRayJob(ns, "lq")
	started := startRayJob(t, rj)
	started.Spec.RayClusterSpec.WorkerGroupSpecs[0].Replicas = ptr.To(int32(5))
	if err := cluster.Client.Update(context.Background(), started); err != nil {
		t.Fatal(err)
	}
	if !started.Spec.Suspend {
		t.Fatal("a running RayJob that grew was not suspended in the same update")
	}
	waitRequeued(t, workloadOf(rj, ray.JobKind), "head=1,workers=5,submitter=1")
}

// A running RayJob can't move to another queue, nor be made to look
// unqueued: its queue-name changes only while it is suspended.
func TestQueueOfARunningRayJobIsKept(t *testing.T) {
	ns, _ := newQueue(t, "4")
	rj := newRayJob(ns, "lq")
	expectQueueKept(t, startRayJob(t, rj))
}

// expectQueueKept checks that a running job can neither move to another
// queue nor leave its queue.
func expectQueueKept(t *testing.T, started client.Object) {
	t.Helper()
	for name, mutate := range map[string]func(map[string]string){
		"moved":    func(l map[string]string) { l[kueue.QueueNameLabel] = "elsewhere" },
		"unqueued": func(l map[string]string) { delete(l, kueue.QueueNameLabel) },
	} {
		changed := started.DeepCopyObject().(client.Object)
		labels := maps.Clone(changed.GetLabels())
		mutate(labels)
		changed.SetLabels(labels)
		err := cluster.Client.Update(context.Background(), changed)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "metadata.labels[kueue.x-k8s.io/queue-name]") {
			t.Errorf("%s: got %v, want refused naming the label", name, err)
		}
	}
}

func TestQueueOfARunningRayClusterIsKept(t *testing.T) {
	ns, _ := newQueue(t, "3")
	rc := newRayCluster(ns, "lq")
	cluster.MustCreate(t, rc)
	started := waitFor(t, rc, "to run", running)
	expectQueueKept(t, started)
}

// startRayJob creates a queued RayJob and waits until it runs.
func startRayJob(t *testing.T, rj *rayv1.RayJob) *rayv1.RayJob {
	t.Helper()
	cluster.MustCreate(t, rj)
	return waitFor(t, rj, "to run", func(rj *rayv1.RayJob) error {
		if rj.Spec.Suspend {
			return fmt.Errorf("suspended")
		}
		return nil
	})
}
