// Package ray is the KubeRay kinds (ray.io/v1) of the job framework: the
// RayJob and the RayCluster, each suspended and resumed through
// spec.suspend, with the Ray cluster's head and worker groups (and a
// RayJob's submitter) as pod sets, the flavors injected into their pod
// templates, and their webhook rules: nothing that would let a Ray cluster
// grow past its admission (autoscaling beyond the maxReplicas its Workload
// counts, an existing cluster, a cluster outliving its job). A RayService is queued through the RayClusters
// KubeRay makes for it (service.go). It must not own the Workload
// lifecycle (internal/integration does).
package ray

import (
	"fmt"
	"math"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// Pod-set names of the parts of a Ray cluster that are not worker groups.
const (
	HeadPodSet      kueue.PodSetReference = "head"
	SubmitterPodSet kueue.PodSetReference = "submitter"
)

// maxPodSets is the most pod sets a Workload holds (its API's limit).
const maxPodSets = 8

// workerPodSet is a worker group's pod-set name: its group name in lower
// case (pod-set names are DNS labels).
func workerPodSet(wg *rayv1.WorkerGroupSpec) kueue.PodSetReference {
	return kueue.PodSetReference(strings.ToLower(wg.GroupName))
}

// workerCount is how many pods a worker group runs at most: its replicas
// (KubeRay starts minReplicas when unset) times its hosts per replica. An
// autoscaling cluster's autoscaler moves the replicas between minReplicas
// and maxReplicas: its Workload counts maxReplicas, so that the cluster
// scales within its admission.
func workerCount(wg *rayv1.WorkerGroupSpec, autoscaling bool) int64 {
	replicas := ptr.Deref(wg.Replicas, ptr.Deref(wg.MinReplicas, 0))
	if autoscaling {
		replicas = ptr.Deref(wg.MaxReplicas, 0)
	}
	return int64(replicas) * int64(max(wg.NumOfHosts, 1))
}

// clusterPodSets are a Ray cluster's pod sets: the head, with the
// containers KubeRay adds to it besides headExtra, then each worker group.
// Errors name the field under path.
func clusterPodSets(spec *rayv1.RayClusterSpec, path *field.Path, reserved int, headExtra ...corev1.Container) ([]kueue.PodSet, field.ErrorList) {
	errs := validateCluster(spec, path, reserved)
	if len(errs) > 0 {
		return nil, errs
	}
	head := *spec.HeadGroupSpec.Template.DeepCopy()
	if autoscales(spec) {
		head.Spec.Containers = append(head.Spec.Containers, autoscalerContainer(spec.AutoscalerOptions))
	}
	head.Spec.Containers = append(head.Spec.Containers, headExtra...)
	podSets := []kueue.PodSet{{Name: HeadPodSet, Count: 1, Template: head}}
	for i := range spec.WorkerGroupSpecs {
		wg := &spec.WorkerGroupSpecs[i]
		podSets = append(podSets, kueue.PodSet{Name: workerPodSet(wg), Count: int32(workerCount(wg, autoscales(spec))), Template: *wg.Template.DeepCopy()})
	}
	return podSets, nil
}

// autoscalerContainer is the container KubeRay adds to an autoscaling
// cluster's head pod for its autoscaler, as the Workload counts it: the
// resources of autoscalerOptions, or KubeRay's default (500m CPU and 512Mi
// of memory, requested and limited).
func autoscalerContainer(options *rayv1.AutoscalerOptions) corev1.Container {
	resources := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("512Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("512Mi")},
	}
	if options != nil && options.Resources != nil {
		resources = *options.Resources.DeepCopy()
	}
	return corev1.Container{Name: "autoscaler", Resources: resources}
}

// autoscales tells whether KubeRay's autoscaler sizes the cluster.
func autoscales(spec *rayv1.RayClusterSpec) bool {
	return ptr.Deref(spec.EnableInTreeAutoscaling, false)
}

// validateCluster checks what clusterPodSets needs, and what would let the
// cluster grow past its admission: at most maxPodSets-reserved worker
// groups (reserved: the head and a submitter), names that are distinct
// pod-set names, counts that fit, and for an autoscaling cluster a bound
// on each group's replicas.
func validateCluster(spec *rayv1.RayClusterSpec, path *field.Path, reserved int) field.ErrorList {
	var errs field.ErrorList
	groups := path.Child("workerGroupSpecs")
	if n := len(spec.WorkerGroupSpecs); n > maxPodSets-reserved {
		errs = append(errs, field.TooMany(groups, n, maxPodSets-reserved))
	}
	seen := map[kueue.PodSetReference]bool{HeadPodSet: true, SubmitterPodSet: true}
	for i := range spec.WorkerGroupSpecs {
		wg := &spec.WorkerGroupSpecs[i]
		p := groups.Index(i)
		name := workerPodSet(wg)
		for _, msg := range validation.IsDNS1123Label(string(name)) {
			errs = append(errs, field.Invalid(p.Child("groupName"), wg.GroupName, "must be a pod-set name in lower case: "+msg))
		}
		if seen[name] {
			errs = append(errs, field.Duplicate(p.Child("groupName"), wg.GroupName))
		}
		seen[name] = true
		if ptr.Deref(wg.Replicas, 0) < 0 || ptr.Deref(wg.MinReplicas, 0) < 0 || ptr.Deref(wg.MaxReplicas, 0) < 0 || wg.NumOfHosts < 0 {
			errs = append(errs, field.Invalid(p.Child("replicas"), ptr.Deref(wg.Replicas, 0), "replicas, minReplicas, maxReplicas and numOfHosts must not be negative"))
			continue
		}
		if autoscales(spec) && (wg.MaxReplicas == nil || *wg.MaxReplicas == math.MaxInt32) {
			// KubeRay's default maxReplicas is the largest int32: no bound.
			errs = append(errs, field.Required(p.Child("maxReplicas"),
				"an autoscaling Ray cluster's worker group needs a maxReplicas: its Workload holds the quota of the most replicas the autoscaler may start"))
			continue
		}
		if count := workerCount(wg, autoscales(spec)); count > math.MaxInt32 {
			errs = append(errs, field.Invalid(p.Child("replicas"), ptr.Deref(wg.Replicas, 0),
				fmt.Sprintf("replicas times numOfHosts must not exceed %d", math.MaxInt32)))
		}
	}
	return errs
}

// defaultSubmitterContainer is KubeRay's submitter container, in the
// default submitter pod of a RayJob that names no template, and in the
// head pod in SidecarMode: 500m CPU and 200Mi of memory requested. The
// Workload counts it.
func defaultSubmitterContainer() corev1.Container {
	return corev1.Container{Name: "ray-job-submitter", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("200Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
	}}
}

// defaultSubmitterTemplate is what KubeRay runs a RayJob's submitter with
// when the RayJob names no template.
func defaultSubmitterTemplate() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers:    []corev1.Container{defaultSubmitterContainer()},
	}}
}
