package ray

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
	"github.com/sluicehq/sluice/internal/quota"
	"github.com/sluicehq/sluice/internal/workload"
)

func spec(groups ...rayv1.WorkerGroupSpec) *rayv1.RayClusterSpec {
	return &rayv1.RayClusterSpec{WorkerGroupSpecs: groups}
}

func group(name string, replicas *int32, minReplicas int32, hosts int32) rayv1.WorkerGroupSpec {
	return rayv1.WorkerGroupSpec{GroupName: name, Replicas: replicas, MinReplicas: ptr.To(minReplicas), NumOfHosts: hosts}
}

func autoscaled(name string, minReplicas, maxReplicas int32) rayv1.WorkerGroupSpec {
	wg := group(name, ptr.To(minReplicas), minReplicas, 1)
	wg.MaxReplicas = ptr.To(maxReplicas)
	return wg
}

// An autoscaling cluster is counted at its groups' maxReplicas: the
// autoscaler moves the replicas below it within the admission.
func TestAutoscalingClusterIsCountedAtItsMaximum(t *testing.T) {
	s := spec(autoscaled("workers", 1, 5))
	s.EnableInTreeAutoscaling = ptr.To(true)
	podSets, errs := clusterPodSets(s, clusterPath, 1)
	if len(errs) > 0 || len(podSets) != 2 || podSets[1].Count != 5 {
		t.Fatalf("pod sets %+v (%v), want workers counted at maxReplicas 5", podSets, errs)
	}
}

// headRequests is what the head pod set's pods request.
func headRequests(t *testing.T, podSets []kueue.PodSet) workload.Requests {
	t.Helper()
	if len(podSets) == 0 || podSets[0].Name != HeadPodSet {
		t.Fatalf("pod sets %v, want the head first", podSets)
	}
	return workload.PodRequests(&podSets[0].Template.Spec)
}

// requests are amounts of CPU and memory ("" for none) as workload counts them.
func requests(cpu, memory string) workload.Requests {
	r := workload.Requests{corev1.ResourceCPU: quota.ToAmount(corev1.ResourceCPU, resource.MustParse(cpu))}
	if memory != "" {
		r[corev1.ResourceMemory] = quota.ToAmount(corev1.ResourceMemory, resource.MustParse(memory))
	}
	return r
}

func oneCPUHead(s *rayv1.RayClusterSpec) *rayv1.RayClusterSpec {
	s.HeadGroupSpec.Template.Spec.Containers = []corev1.Container{{Name: "ray-head", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}
	return s
}

// KubeRay adds containers to the head pod that request resources of
// their own: the autoscaler of an autoscaling cluster (seen under the real
// operator: 500m CPU and 512Mi more than the head's template asks), and a
// SidecarMode RayJob's submitter. The head pod set counts them.
func TestHeadCountsWhatKubeRayAddsToIt(t *testing.T) {
	s := oneCPUHead(spec(autoscaled("workers", 1, 2)))
	s.EnableInTreeAutoscaling = ptr.To(true)
	podSets, errs := clusterPodSets(s, clusterPath, 1)
	if got := headRequests(t, podSets); len(errs) > 0 || !maps.Equal(got, requests("1500m", "512Mi")) {
		t.Errorf("autoscaling head requests %v (%v), want 1500m CPU and 512Mi", got, errs)
	}
	s.AutoscalerOptions = &rayv1.AutoscalerOptions{Resources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}}
	podSets, _ = clusterPodSets(s, clusterPath, 1)
	if got := headRequests(t, podSets); !maps.Equal(got, requests("3", "")) {
		t.Errorf("head requests with the autoscaler's own resources %v, want 3 CPU", got)
	}

	rj := &rayv1.RayJob{Spec: rayv1.RayJobSpec{RayClusterSpec: oneCPUHead(spec(group("workers", ptr.To(int32(1)), 0, 1))),
		ShutdownAfterJobFinishes: true, SubmissionMode: rayv1.SidecarMode}}
	podSets, err := (newJob(rj)).PodSets()
	if err != nil || len(podSets) != 2 {
		t.Fatalf("SidecarMode pod sets %v (%v), want head and workers: the submitter runs in the head", podSets, err)
	}
	if got := headRequests(t, podSets); !maps.Equal(got, requests("1500m", "200Mi")) {
		t.Errorf("SidecarMode head requests %v, want 1500m CPU and 200Mi", got)
	}

	// The cluster KubeRay makes for it has the submitter in its head
	// template: it is the RayJob's, and a head asking for more is not.
	rj.Name, rj.Status.RayClusterName = "job", "job-abc"
	child := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "job-abc"}, Spec: *rj.Spec.RayClusterSpec.DeepCopy()}
	child.Spec.HeadGroupSpec.Template.Spec.Containers = append(child.Spec.HeadGroupSpec.Template.Spec.Containers, defaultSubmitterContainer())
	if !jobMakes(rj, child) {
		t.Error("the SidecarMode RayJob's cluster is not the RayJob's")
	}
	child.Spec.HeadGroupSpec.Template.Spec.Containers[1].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("4")
	if jobMakes(rj, child) {
		t.Error("a cluster whose head asks for more than the RayJob's is the RayJob's")
	}
}

func TestClusterPodSets(t *testing.T) {
	podSets, errs := clusterPodSets(spec(group("GPU", ptr.To(int32(3)), 1, 2), group("cpu", nil, 2, 0)), clusterPath, 1)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var got []string
	for _, ps := range podSets {
		got = append(got, fmt.Sprintf("%s=%d", ps.Name, ps.Count))
	}
	// Names in lower case; replicas times hosts; minReplicas when replicas
	// is unset; at least one host.
	if strings.Join(got, ",") != "head=1,gpu=6,cpu=2" {
		t.Fatalf("pod sets %v, want head=1,gpu=6,cpu=2", got)
	}
}

func TestClusterRules(t *testing.T) {
	for name, tc := range map[string]struct {
		spec *rayv1.RayClusterSpec
		want string
	}{
		"autoscaling without maxReplicas": {&rayv1.RayClusterSpec{EnableInTreeAutoscaling: ptr.To(true), WorkerGroupSpecs: []rayv1.WorkerGroupSpec{group("a", nil, 1, 1)}},
			"workerGroupSpecs[0].maxReplicas: Required"},
		"autoscaling with KubeRay's unbounded maxReplicas": {&rayv1.RayClusterSpec{EnableInTreeAutoscaling: ptr.To(true), WorkerGroupSpecs: []rayv1.WorkerGroupSpec{autoscaled("a", 1, math.MaxInt32)}},
			"workerGroupSpecs[0].maxReplicas: Required"},
		"reserved name":     {spec(group("Head", ptr.To(int32(1)), 0, 1)), "groupName: Duplicate value"},
		"invalid name":      {spec(group("a_b", ptr.To(int32(1)), 0, 1)), "must be a pod-set name"},
		"negative replicas": {spec(group("a", ptr.To(int32(-1)), 0, 1)), "must not be negative"},
		"overflow":          {spec(group("a", ptr.To(int32(math.MaxInt32)), 0, 2)), "must not exceed"},
		"too many groups":   {spec(group("a", nil, 0, 0), group("b", nil, 0, 0), group("c", nil, 0, 0), group("d", nil, 0, 0), group("e", nil, 0, 0), group("f", nil, 0, 0), group("g", nil, 0, 0), group("h", nil, 0, 0)), "must have at most 7 items"},
	} {
		t.Run(name, func(t *testing.T) {
			if errs := validateCluster(tc.spec, clusterPath, 1); !strings.Contains(errs.ToAggregate().Error(), tc.want) {
				t.Fatalf("errors %v, want %q", errs, tc.want)
			}
		})
	}
}

func TestRayJobRunAndRestore(t *testing.T) {
	rj := newJob(&rayv1.RayJob{Spec: rayv1.RayJobSpec{RayClusterSpec: spec(group("workers", ptr.To(int32(2)), 0, 1)), Suspend: true, ShutdownAfterJobFinishes: true}})
	podSets, err := rj.PodSets()
	if err != nil || len(podSets) != 3 || podSets[2].Name != SubmitterPodSet {
		t.Fatalf("pod sets %v (%v), want head, workers and the default submitter", podSets, err)
	}
	originals := rj.Originals()
	infos := []integration.PodSetInfo{{Name: HeadPodSet, NodeSelector: map[string]string{"pool": "a"}}, {Name: "workers", NodeSelector: map[string]string{"pool": "a"}},
		{Name: SubmitterPodSet, NodeSelector: map[string]string{"pool": "a"}}}
	if err := rj.Run(infos); err != nil {
		t.Fatal(err)
	}
	if rj.IsSuspended() || rj.Spec.RayClusterSpec.WorkerGroupSpecs[0].Template.Spec.NodeSelector["pool"] != "a" || rj.Spec.SubmitterPodTemplate != nil {
		t.Fatalf("after Run: suspended %v, workers %v, submitter template %v", rj.IsSuspended(), rj.Spec.RayClusterSpec.WorkerGroupSpecs[0].Template.Spec.NodeSelector, rj.Spec.SubmitterPodTemplate)
	}
	if !rj.Restore(originals) || len(rj.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.NodeSelector) != 0 {
		t.Fatal("Restore did not undo the head's nodeSelector")
	}
	if err := rj.Run(infos[:2]); err == nil {
		t.Error("Run without the submitter's pod set: no error")
	}
	// HTTP submission: no submitter pod.
	rj.Spec.SubmissionMode = rayv1.HTTPMode
	if podSets, _ := rj.PodSets(); len(podSets) != 2 {
		t.Errorf("HTTPMode pod sets %v, want head and workers only", podSets)
	}
}

func TestRayJobStatus(t *testing.T) {
	rj := newJob(&rayv1.RayJob{})
	if rj.Active() {
		t.Error("a new RayJob is active")
	}
	for status, want := range map[rayv1.JobDeploymentStatus]bool{rayv1.JobDeploymentStatusRunning: true, rayv1.JobDeploymentStatusSuspending: true,
		rayv1.JobDeploymentStatusSuspended: false, rayv1.JobDeploymentStatusComplete: false} {
		rj.Status.JobDeploymentStatus = status
		if rj.Active() != want {
			t.Errorf("%s: active %v, want %v", status, !want, want)
		}
	}
	rj.Status.JobDeploymentStatus, rj.Status.JobStatus = rayv1.JobDeploymentStatusComplete, rayv1.JobStatusStopped
	if done, ok, _ := rj.Finished(); !done || ok {
		t.Errorf("a stopped Ray job: done %v succeeded %v, want done and failed", done, ok)
	}
	rj.Spec.ManagedBy = ptr.To("example.com/other")
	if rj.ManagedElsewhere() == "" {
		t.Error("another controller's RayJob is sluice's")
	}
}

// FuzzRayPodSets: the Ray kinds' pod sets, rules and templates answer any
// decodable object with errors, never a panic.
func FuzzRayPodSets(f *testing.F) {
	f.Add([]byte(`{"spec":{"rayClusterSpec":{"workerGroupSpecs":[{"groupName":"","replicas":-1,"numOfHosts":2147483647}]},"submitterPodTemplate":{"spec":{}}}}`))
	f.Add([]byte(`{"spec":{"clusterSelector":{"a":"b"},"submissionMode":"HTTPMode"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var rj rayv1.RayJob
		if json.Unmarshal(data, &rj) != nil {
			return
		}
		j := newJob(&rj)
		_, _ = j.PodSets()
		_ = jobTemplateList(&rj)
		_ = j.Originals()
		_ = integration.ValidateQueueingMetadata(&rj)
		integration.SuspendIfGrown(newJob(rj.DeepCopy()), j)
		if rj.Spec.RayClusterSpec != nil {
			rc := newCluster(&rayv1.RayCluster{Spec: *rj.Spec.RayClusterSpec})
			_, _ = rc.PodSets()
			_ = rc.Originals()
			_ = rc.Run([]integration.PodSetInfo{{Name: HeadPodSet, Tolerations: []corev1.Toleration{{Key: "k"}}}})
		}
	})
}
