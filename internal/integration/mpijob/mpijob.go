// Package mpijob is Kubeflow's MPIJob (kubeflow.org/v2beta1) in the job
// framework: a launcher and workers as pod sets, suspended and resumed
// through spec.runPolicy.suspend, the flavors injected into each replica
// type's pod template, and its webhook rules. It must not own the Workload
// lifecycle (internal/integration does).
package mpijob

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
	"github.com/sluicehq/sluice/internal/integration/job"
)

// +kubebuilder:webhook:path=/mutate-kubeflow-org-v2beta1-mpijob,mutating=true,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=kubeflow.org,resources=mpijobs,verbs=create;update,versions=v2beta1,name=mmpijob.kueue.x-k8s.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-kubeflow-org-v2beta1-mpijob,mutating=false,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=kubeflow.org,resources=mpijobs,verbs=create;update,versions=v2beta1,name=vmpijob.kueue.x-k8s.io,admissionReviewVersions=v1
// +kubebuilder:rbac:groups=kubeflow.org,resources=mpijobs,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kubeflow.org,resources=mpijobs/status,verbs=get

// Kind is the MPIJob in the job framework.
var Kind = integration.Kind{
	Framework: configapi.FrameworkMPIJob,
	GVK:       mpiv2.SchemeGroupVersionKind,
	NewObject: func() client.Object { return &mpiv2.MPIJob{} },
	NewList:   func() client.ObjectList { return &mpiv2.MPIJobList{} },
	Wrap:      func(o client.Object) integration.Job { return newMPIJob(o.(*mpiv2.MPIJob)) },
	// The launcher is a batch Job; the workers are Pods.
	Children: []schema.GroupKind{{Group: "batch", Kind: "Job"}, {Kind: "Pod"}},
	Makes:    makes,
}

// makes is the MPIJob's Makes, as the MPI operator names what it makes:
// its launcher Job (<mpijob>-launcher, one pod of the launcher's template)
// and its worker Pods (<mpijob>-worker-<index>, index below the workers'
// replicas).
func makes(parent, child client.Object) bool {
	mpi, ok := parent.(*mpiv2.MPIJob)
	if !ok {
		return false
	}
	switch c := child.(type) {
	case *batchv1.Job:
		launcher := mpi.Spec.MPIReplicaSpecs[mpiv2.MPIReplicaTypeLauncher]
		return launcher != nil && c.Name == mpi.Name+"-launcher" && job.Count(c) <= 1 &&
			integration.SamePodRequests(&c.Spec.Template.Spec, &launcher.Template.Spec)
	case *corev1.Pod:
		worker := mpi.Spec.MPIReplicaSpecs[mpiv2.MPIReplicaTypeWorker]
		index, found := strings.CutPrefix(c.Name, mpi.Name+"-worker-")
		n, err := strconv.ParseInt(index, 10, 32)
		return worker != nil && found && err == nil && strconv.FormatInt(n, 10) == index && n >= 0 && int32(n) < replicas(mpiv2.MPIReplicaTypeWorker, worker)
	}
	return false
}

// Registration is the MPIJob in the list of kinds.
var Registration = integration.JobRegistration(&Kind, "mpijobs.kubeflow.org", func(deps integration.Deps) func(ctrl.Manager) error {
	return newWebhook(deps).Register
})

// replicaTypes are the replica types of an MPIJob, in pod-set order.
var replicaTypes = []mpiv2.MPIReplicaType{mpiv2.MPIReplicaTypeLauncher, mpiv2.MPIReplicaTypeWorker}

var specsPath = field.NewPath("spec", "mpiReplicaSpecs")

// podSetName is a replica type's pod set: its name in lower case.
func podSetName(t mpiv2.MPIReplicaType) kueue.PodSetReference {
	return kueue.PodSetReference(strings.ToLower(string(t)))
}

// replicas is a replica type's pod count with the MPI operator's defaults
// (one launcher, no workers).
func replicas(t mpiv2.MPIReplicaType, spec *mpiv2.ReplicaSpec) int32 {
	if t == mpiv2.MPIReplicaTypeLauncher {
		return ptr.Deref(spec.Replicas, 1)
	}
	return ptr.Deref(spec.Replicas, 0)
}

// MPIJob adapts an MPIJob to the framework.
type MPIJob struct {
	*mpiv2.MPIJob
	integration.ByTemplates
}

// newMPIJob wraps an MPIJob.
func newMPIJob(job *mpiv2.MPIJob) *MPIJob {
	j := &MPIJob{MPIJob: job}
	j.ByTemplates = integration.ByTemplates{Job: j}
	return j
}

func (j *MPIJob) Object() client.Object { return j.MPIJob }

func (j *MPIJob) IsSuspended() bool { return ptr.Deref(j.Spec.RunPolicy.Suspend, false) }

func (j *MPIJob) Suspend() { j.Spec.RunPolicy.Suspend = ptr.To(true) }

// PodSets: the launcher, then the workers.
func (j *MPIJob) PodSets() ([]kueue.PodSet, error) {
	if errs := validate(j.MPIJob); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	var podSets []kueue.PodSet
	for _, t := range replicaTypes {
		if spec := j.Spec.MPIReplicaSpecs[t]; spec != nil {
			podSets = append(podSets, kueue.PodSet{Name: podSetName(t), Count: replicas(t, spec), Template: *spec.Template.DeepCopy()})
		}
	}
	return podSets, nil
}

// validate: a launcher, only the launcher and worker replica types, one
// launcher, counts that are not negative.
func validate(job *mpiv2.MPIJob) field.ErrorList {
	var errs field.ErrorList
	for t := range job.Spec.MPIReplicaSpecs {
		if !slices.Contains(replicaTypes, t) {
			errs = append(errs, field.NotSupported(specsPath.Key(string(t)), t, replicaTypes))
		}
	}
	launcher := job.Spec.MPIReplicaSpecs[mpiv2.MPIReplicaTypeLauncher]
	if launcher == nil {
		errs = append(errs, field.Required(specsPath.Key(string(mpiv2.MPIReplicaTypeLauncher)), "an MPIJob needs its launcher"))
	} else if n := replicas(mpiv2.MPIReplicaTypeLauncher, launcher); n != 1 {
		errs = append(errs, field.Invalid(specsPath.Key(string(mpiv2.MPIReplicaTypeLauncher)).Child("replicas"), n, "an MPIJob has one launcher"))
	}
	if worker := job.Spec.MPIReplicaSpecs[mpiv2.MPIReplicaTypeWorker]; worker != nil {
		if n := replicas(mpiv2.MPIReplicaTypeWorker, worker); n < 0 {
			errs = append(errs, field.Invalid(specsPath.Key(string(mpiv2.MPIReplicaTypeWorker)).Child("replicas"), n, "must not be negative"))
		}
	}
	return errs
}

// Templates are the MPIJob's pod templates by pod-set name.
func (j *MPIJob) Templates() integration.PodTemplates {
	t := integration.PodTemplates{}
	for _, rt := range replicaTypes {
		if spec := j.Spec.MPIReplicaSpecs[rt]; spec != nil {
			t[podSetName(rt)] = &spec.Template
		}
	}
	return t
}

// LetRun makes the workers end with the job and unsuspends it
// (ByTemplates runs it).
func (j *MPIJob) LetRun() {
	cleanUpWhenFinished(j.MPIJob)
	j.Spec.RunPolicy.Suspend = ptr.To(false)
}

var cleanPodPolicyPath = field.NewPath("spec", "runPolicy", "cleanPodPolicy")

// cleanUpWhenFinished makes a running MPIJob's workers end with it. The
// operator's default, None, leaves them running once the launcher is done
// (and reports no active worker), while the finished Workload gives their
// quota back; Running deletes the running and pending ones.
func cleanUpWhenFinished(job *mpiv2.MPIJob) {
	if policy := job.Spec.RunPolicy.CleanPodPolicy; policy == nil || *policy == mpiv2.CleanPodPolicyNone {
		job.Spec.RunPolicy.CleanPodPolicy = ptr.To(mpiv2.CleanPodPolicyRunning)
	}
}

// validateCleanPodPolicy refuses None on a queued MPIJob: its workers
// would outlive the admission (see cleanUpWhenFinished).
func validateCleanPodPolicy(job *mpiv2.MPIJob) field.ErrorList {
	if policy := job.Spec.RunPolicy.CleanPodPolicy; policy != nil && *policy == mpiv2.CleanPodPolicyNone {
		return field.ErrorList{field.Invalid(cleanPodPolicyPath, *policy,
			"a queued MPIJob's workers must end with it (Running or All; unset is set to Running at admission): with None they would keep running on quota given back when the job finishes")}
	}
	return nil
}

// Finished reads the Succeeded and Failed conditions.
func (j *MPIJob) Finished() (bool, bool, string) {
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case mpiv2.JobSucceeded:
			return true, true, integration.MessageOr(c.Message, "MPIJob succeeded")
		case mpiv2.JobFailed:
			return true, false, integration.MessageOr(c.Message, fmt.Sprintf("MPIJob failed: %s", c.Reason))
		}
	}
	return false, false, ""
}

// Active: a replica type still has active pods.
func (j *MPIJob) Active() bool {
	for _, s := range j.Status.ReplicaStatuses {
		if s != nil && s.Active > 0 {
			return true
		}
	}
	return false
}

func (j *MPIJob) ReclaimablePods() []kueue.ReclaimablePod { return nil }

// ManagedElsewhere names a controller other than the MPI operator
// (MultiKueue's is sluice's own, and dispatches no MPIJob yet).
func (j *MPIJob) ManagedElsewhere() string {
	if by := ptr.Deref(j.Spec.RunPolicy.ManagedBy, mpiv2.KubeflowJobController); by != mpiv2.KubeflowJobController && by != kueue.MultiKueueControllerName {
		return by
	}
	return ""
}

// newWebhook is the MPIJob webhook: the shared plumbing with the MPIJob's
// rules on every MPIJob sluice queues.
func newWebhook(deps integration.Deps) *integration.JobWebhook[*mpiv2.MPIJob] {
	return &integration.JobWebhook[*mpiv2.MPIJob]{
		Enabled: deps.Enabled, Kind: Kind, Policy: deps.Policy, Reader: deps.Reader, APIReader: deps.APIReader,
		Templates: func(job *mpiv2.MPIJob) []integration.Template {
			var out []integration.Template
			for _, rt := range replicaTypes {
				if spec := job.Spec.MPIReplicaSpecs[rt]; spec != nil {
					out = append(out, integration.Template{Meta: &spec.Template.ObjectMeta, Pod: &spec.Template.Spec, Path: specsPath.Key(string(rt)).Child("template")})
				}
			}
			return out
		},
		QueuedRules: func(job *mpiv2.MPIJob) field.ErrorList {
			return append(validate(job), validateCleanPodPolicy(job)...)
		},
		DefaultUpdate: func(old, job *mpiv2.MPIJob) {
			integration.SuspendIfGrown(newMPIJob(old), newMPIJob(job))
			// An update that unsets the policy of an MPIJob sluice
			// started gets the one it was started with.
			if integration.Started(newMPIJob(job)) && job.Spec.RunPolicy.CleanPodPolicy == nil {
				cleanUpWhenFinished(job)
			}
		},
	}
}
