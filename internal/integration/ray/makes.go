package ray

import (
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluicehq/sluice/internal/integration"
	"github.com/sluicehq/sluice/internal/integration/job"
)

// clusterLabel is the label KubeRay puts on a Ray cluster's pods: the
// cluster's name.
const clusterLabel = "ray.io/cluster"

// clusterMakes is the RayCluster's Makes: a Pod is the cluster's when
// KubeRay labelled it with the cluster's name.
func clusterMakes(parent, child client.Object) bool {
	return child.GetLabels()[clusterLabel] == parent.GetName()
}

// jobMakes is the RayJob's Makes, as KubeRay names what it makes for a
// RayJob: the RayCluster it named in the RayJob's status (before creating
// it), no larger than the RayJob's rayClusterSpec (with the submitter in
// its head in SidecarMode), and the submitter Job,
// named like the RayJob, of one pod of the submitter's template.
func jobMakes(parent, child client.Object) bool {
	rj, ok := parent.(*rayv1.RayJob)
	if !ok || rj.Spec.RayClusterSpec == nil {
		return false
	}
	switch c := child.(type) {
	case *rayv1.RayCluster:
		if c.Name != rj.Status.RayClusterName {
			return false
		}
		allowed, errs := jobClusterPodSets(rj)
		podSets, clusterErrs := clusterPodSets(&c.Spec, clusterPath, 1)
		return len(errs) == 0 && len(clusterErrs) == 0 && integration.FitsWithin(podSets, allowed)
	case *batchv1.Job:
		podSets, err := newJob(rj).PodSets()
		if err != nil || c.Name != rj.Name || job.Count(c) > 1 {
			return false
		}
		submitter := &podSets[len(podSets)-1]
		return submitter.Name == SubmitterPodSet && integration.SamePodRequests(&c.Spec.Template.Spec, &submitter.Template.Spec)
	}
	return false
}
