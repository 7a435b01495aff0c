package ray

import (
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
)

// +kubebuilder:webhook:path=/mutate-ray-io-v1-raycluster,mutating=true,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=ray.io,resources=rayclusters,verbs=create;update,versions=v1,name=mraycluster.kueue.x-k8s.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-ray-io-v1-raycluster,mutating=false,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=ray.io,resources=rayclusters,verbs=create;update,versions=v1,name=vraycluster.kueue.x-k8s.io,admissionReviewVersions=v1
// +kubebuilder:rbac:groups=ray.io,resources=rayclusters,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=ray.io,resources=rayclusters/status,verbs=get

// kubeRayController is the managedBy value of the Ray kinds KubeRay runs.
const kubeRayController = "ray.io/kuberay-operator"

// ClusterKind is the RayCluster in the job framework.
var ClusterKind = integration.Kind{
	Framework: configapi.FrameworkRayCluster,
	GVK:       rayv1.SchemeGroupVersion.WithKind("RayCluster"),
	NewObject: func() client.Object { return &rayv1.RayCluster{} },
	NewList:   func() client.ObjectList { return &rayv1.RayClusterList{} },
	Wrap:      func(o client.Object) integration.Job { return newCluster(o.(*rayv1.RayCluster)) },
	Children:  []schema.GroupKind{{Kind: "Pod"}},
	Makes:     clusterMakes,
}

// ClusterRegistration is the RayCluster in the list of kinds.
var ClusterRegistration = integration.JobRegistration(&ClusterKind, "rayclusters.ray.io", func(deps integration.Deps) func(ctrl.Manager) error {
	return newClusterWebhook(deps).Register
})

// Cluster adapts a RayCluster to the framework. A RayCluster runs until it
// is deleted: it never finishes, and its Workload holds the quota until
// then.
type Cluster struct {
	*rayv1.RayCluster
	integration.ByTemplates
}

// newCluster wraps a RayCluster.
func newCluster(rc *rayv1.RayCluster) *Cluster {
	c := &Cluster{RayCluster: rc}
	c.ByTemplates = integration.ByTemplates{Job: c}
	return c
}

var clusterPath = field.NewPath("spec")

func (c *Cluster) Object() client.Object { return c.RayCluster }

func (c *Cluster) IsSuspended() bool { return ptr.Deref(c.Spec.Suspend, false) }

func (c *Cluster) Suspend() { c.Spec.Suspend = ptr.To(true) }

func (c *Cluster) PodSets() ([]kueue.PodSet, error) {
	podSets, errs := clusterPodSets(&c.Spec, clusterPath, 1)
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return podSets, nil
}

// Templates are the cluster's pod templates by pod-set name.
func (c *Cluster) Templates() integration.PodTemplates {
	return clusterTemplates(&c.Spec)
}

// clusterTemplates are a Ray cluster's pod templates by pod-set name.
func clusterTemplates(spec *rayv1.RayClusterSpec) integration.PodTemplates {
	t := integration.PodTemplates{HeadPodSet: &spec.HeadGroupSpec.Template}
	for i := range spec.WorkerGroupSpecs {
		t[workerPodSet(&spec.WorkerGroupSpecs[i])] = &spec.WorkerGroupSpecs[i].Template
	}
	return t
}

// LetRun unsuspends the cluster (ByTemplates runs it).
func (c *Cluster) LetRun() { c.Spec.Suspend = ptr.To(false) }

// Finished: a RayCluster doesn't finish.
func (c *Cluster) Finished() (bool, bool, string) { return false, false, "" }

// Active: KubeRay reconciled the cluster (it has conditions) and has not
// reported it suspended (RayClusterSuspended: all its pods deleted).
func (c *Cluster) Active() bool {
	return len(c.Status.Conditions) > 0 && !meta.IsStatusConditionTrue(c.Status.Conditions, string(rayv1.RayClusterSuspended))
}

func (c *Cluster) ReclaimablePods() []kueue.ReclaimablePod { return nil }

func (c *Cluster) ManagedElsewhere() string { return managedElsewhere(c.Spec.ManagedBy) }

// managedElsewhere names a controller other than KubeRay (MultiKueue's is
// sluice's own, and dispatches no Ray kind yet: the MultiKueue check
// rejects its Workload).
func managedElsewhere(by *string) string {
	if v := ptr.Deref(by, kubeRayController); v != kubeRayController && v != kueue.MultiKueueControllerName {
		return v
	}
	return ""
}

// newClusterWebhook is the RayCluster webhook: the shared plumbing, with
// the cluster's rules on every RayCluster sluice queues.
func newClusterWebhook(deps integration.Deps) *integration.JobWebhook[*rayv1.RayCluster] {
	return &integration.JobWebhook[*rayv1.RayCluster]{
		Enabled: deps.Enabled, Kind: ClusterKind, Policy: deps.Policy, Reader: deps.Reader, APIReader: deps.APIReader,
		Templates: func(rc *rayv1.RayCluster) []integration.Template { return clusterTemplateList(&rc.Spec, clusterPath) },
		QueuedRules: func(rc *rayv1.RayCluster) field.ErrorList {
			return validateCluster(&rc.Spec, clusterPath, 1)
		},
		DefaultUpdate: func(old, rc *rayv1.RayCluster) { integration.SuspendIfGrown(newCluster(old), newCluster(rc)) },
	}
}

// clusterTemplateList are a Ray cluster's pod templates with their paths.
func clusterTemplateList(spec *rayv1.RayClusterSpec, path *field.Path) []integration.Template {
	head := &spec.HeadGroupSpec.Template
	out := []integration.Template{{Meta: &head.ObjectMeta, Pod: &head.Spec, Path: path.Child("headGroupSpec", "template")}}
	for i := range spec.WorkerGroupSpecs {
		tmpl := &spec.WorkerGroupSpecs[i].Template
		out = append(out, integration.Template{Meta: &tmpl.ObjectMeta, Pod: &tmpl.Spec, Path: path.Child("workerGroupSpecs").Index(i).Child("template")})
	}
	return out
}
