package ray

import (
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
)

// +kubebuilder:webhook:path=/mutate-ray-io-v1-rayjob,mutating=true,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=ray.io,resources=rayjobs,verbs=create;update,versions=v1,name=mrayjob.kueue.x-k8s.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-ray-io-v1-rayjob,mutating=false,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=ray.io,resources=rayjobs,verbs=create;update,versions=v1,name=vrayjob.kueue.x-k8s.io,admissionReviewVersions=v1
// +kubebuilder:rbac:groups=ray.io,resources=rayjobs,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=ray.io,resources=rayjobs/status,verbs=get

// JobKind is the RayJob in the job framework.
var JobKind = integration.Kind{
	Framework: configapi.FrameworkRayJob,
	GVK:       rayv1.SchemeGroupVersion.WithKind("RayJob"),
	NewObject: func() client.Object { return &rayv1.RayJob{} },
	NewList:   func() client.ObjectList { return &rayv1.RayJobList{} },
	Wrap:      func(o client.Object) integration.Job { return newJob(o.(*rayv1.RayJob)) },
	// Its cluster, and the submitter's batch Job (K8sJobMode).
	Children: []schema.GroupKind{{Group: rayv1.GroupVersion.Group, Kind: "RayCluster"}, {Group: "batch", Kind: "Job"}},
	Makes:    jobMakes,
}

// JobRegistration is the RayJob in the list of kinds.
var JobRegistration = integration.JobRegistration(&JobKind, "rayjobs.ray.io", func(deps integration.Deps) func(ctrl.Manager) error {
	return newJobWebhook(deps).Register
})

var (
	jobPath     = field.NewPath("spec")
	clusterSpec = jobPath.Child("rayClusterSpec")
)

// Job adapts a RayJob to the framework: the Ray cluster KubeRay creates
// for it, and its submitter when KubeRay submits through a Job.
type Job struct {
	*rayv1.RayJob
	integration.ByTemplates
}

// newJob wraps a RayJob.
func newJob(rj *rayv1.RayJob) *Job {
	j := &Job{RayJob: rj}
	j.ByTemplates = integration.ByTemplates{Job: j}
	return j
}

func (j *Job) Object() client.Object { return j.RayJob }

func (j *Job) IsSuspended() bool { return j.Spec.Suspend }

func (j *Job) Suspend() { j.Spec.Suspend = true }

// hasSubmitter: KubeRay runs the job's submitter as a pod (K8sJobMode, the
// default), which the Workload counts.
func (j *Job) hasSubmitter() bool {
	return j.Spec.SubmissionMode == "" || j.Spec.SubmissionMode == rayv1.K8sJobMode
}

func (j *Job) PodSets() ([]kueue.PodSet, error) {
	errs := validateJob(j.RayJob)
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	podSets, errs := jobClusterPodSets(j.RayJob)
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	if j.hasSubmitter() {
		tmpl := defaultSubmitterTemplate()
		if j.Spec.SubmitterPodTemplate != nil {
			tmpl = *j.Spec.SubmitterPodTemplate.DeepCopy()
		}
		podSets = append(podSets, kueue.PodSet{Name: SubmitterPodSet, Count: 1, Template: tmpl})
	}
	return podSets, nil
}

// jobClusterPodSets are the pod sets of the Ray cluster KubeRay makes for
// a RayJob: in SidecarMode, its head pod runs the submitter too.
func jobClusterPodSets(rj *rayv1.RayJob) ([]kueue.PodSet, field.ErrorList) {
	var headExtra []corev1.Container
	if rj.Spec.SubmissionMode == rayv1.SidecarMode {
		headExtra = append(headExtra, defaultSubmitterContainer())
	}
	return clusterPodSets(rj.Spec.RayClusterSpec, clusterSpec, 2, headExtra...)
}

// validateJob: a queued RayJob brings its own cluster (one selected by
// clusterSelector runs on quota another Workload holds, or none), and
// deletes it when the job finishes (a cluster left behind would run on
// after its Workload finished).
func validateJob(rj *rayv1.RayJob) field.ErrorList {
	var errs field.ErrorList
	if len(rj.Spec.ClusterSelector) > 0 {
		errs = append(errs, field.Forbidden(jobPath.Child("clusterSelector"), "a queued RayJob can't run on an existing Ray cluster: it brings its own in rayClusterSpec"))
	}
	if rj.Spec.RayClusterSpec == nil {
		errs = append(errs, field.Required(clusterSpec, "a queued RayJob needs the Ray cluster it runs on"))
	}
	if !rj.Spec.ShutdownAfterJobFinishes && rj.Spec.SubmissionMode != rayv1.InteractiveMode {
		errs = append(errs, field.Invalid(jobPath.Child("shutdownAfterJobFinishes"), false,
			"must be true for a queued RayJob: its Ray cluster must not run on once the job, and its Workload, finished"))
	}
	return errs
}

// Templates are the RayJob's pod templates by pod-set name: its cluster's
// and its submitter's.
func (j *Job) Templates() integration.PodTemplates {
	if j.Spec.RayClusterSpec == nil {
		return integration.PodTemplates{}
	}
	t := clusterTemplates(j.Spec.RayClusterSpec)
	if j.hasSubmitter() {
		// KubeRay's default submitter template is its own: nothing is
		// injected into it (its pod may run on any flavor's nodes).
		t[SubmitterPodSet] = j.Spec.SubmitterPodTemplate
	}
	return t
}

// LetRun unsuspends the RayJob (ByTemplates runs it).
func (j *Job) LetRun() { j.Spec.Suspend = false }

// Finished reads KubeRay's deployment status: Complete (succeeded when the
// Ray job did), Failed or ValidationFailed.
func (j *Job) Finished() (bool, bool, string) {
	switch j.Status.JobDeploymentStatus {
	case rayv1.JobDeploymentStatusComplete:
		succeeded := j.Status.JobStatus == rayv1.JobStatusSucceeded
		return true, succeeded, integration.MessageOr(j.Status.Message, "RayJob finished with status "+string(j.Status.JobStatus))
	case rayv1.JobDeploymentStatusFailed, rayv1.JobDeploymentStatusValidationFailed:
		return true, false, integration.MessageOr(j.Status.Message, "RayJob failed: "+string(j.Status.Reason))
	}
	return false, false, ""
}

// Active: KubeRay deployed the job's cluster and has not reported it gone
// (Suspended, or a final status).
func (j *Job) Active() bool {
	switch j.Status.JobDeploymentStatus {
	case rayv1.JobDeploymentStatusNew, rayv1.JobDeploymentStatusSuspended,
		rayv1.JobDeploymentStatusComplete, rayv1.JobDeploymentStatusFailed, rayv1.JobDeploymentStatusValidationFailed:
		return false
	}
	return true
}

func (j *Job) ReclaimablePods() []kueue.ReclaimablePod { return nil }

func (j *Job) ManagedElsewhere() string { return managedElsewhere(j.Spec.ManagedBy) }

// newJobWebhook is the RayJob webhook: the shared plumbing, with the
// RayJob's and its cluster's rules on every RayJob sluice queues.
func newJobWebhook(deps integration.Deps) *integration.JobWebhook[*rayv1.RayJob] {
	return &integration.JobWebhook[*rayv1.RayJob]{
		Enabled: deps.Enabled, Kind: JobKind, Policy: deps.Policy, Reader: deps.Reader, APIReader: deps.APIReader,
		Templates: jobTemplateList,
		QueuedRules: func(rj *rayv1.RayJob) field.ErrorList {
			errs := validateJob(rj)
			if rj.Spec.RayClusterSpec != nil {
				errs = append(errs, validateCluster(rj.Spec.RayClusterSpec, clusterSpec, 2)...)
			}
			return errs
		},
		DefaultUpdate: func(old, rj *rayv1.RayJob) { integration.SuspendIfGrown(newJob(old), newJob(rj)) },
	}
}

// jobTemplateList are a RayJob's pod templates with their paths.
func jobTemplateList(rj *rayv1.RayJob) []integration.Template {
	var out []integration.Template
	if rj.Spec.RayClusterSpec != nil {
		out = clusterTemplateList(rj.Spec.RayClusterSpec, clusterSpec)
	}
	if s := rj.Spec.SubmitterPodTemplate; s != nil {
		out = append(out, integration.Template{Meta: &s.ObjectMeta, Pod: &s.Spec, Path: jobPath.Child("submitterPodTemplate")})
	}
	return out
}
