package jobset

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
)

// +kubebuilder:rbac:groups=jobset.x-k8s.io,resources=jobsets,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=jobset.x-k8s.io,resources=jobsets/status,verbs=get

// Kind is the JobSet in the job framework.
var Kind = integration.Kind{
	Framework: configapi.FrameworkJobSet,
	GVK:       jobsetapi.SchemeGroupVersion.WithKind("JobSet"),
	NewObject: func() client.Object { return &jobsetapi.JobSet{} },
	NewList:   func() client.ObjectList { return &jobsetapi.JobSetList{} },
	Wrap:      func(o client.Object) integration.Job { return newJobSet(o.(*jobsetapi.JobSet)) },
	Children:  []schema.GroupKind{{Group: "batch", Kind: "Job"}},
	Makes:     makes,
	PodsGone: func(ctx context.Context, reader client.Reader, namespace, _ string, uid types.UID) (bool, error) {
		// The JobSet controller labels its Jobs' pods with the JobSet's
		// UID; one deleted with orphan propagation leaves them running.
		return integration.PodsGoneByLabel(ctx, reader, namespace, jobsetapi.JobSetUIDKey, string(uid))
	},
}

// Registration is the JobSet in the list of kinds.
var Registration = integration.JobRegistration(&Kind, "jobsets.jobset.x-k8s.io", func(deps integration.Deps) func(ctrl.Manager) error {
	return newWebhook(deps).Register
})

// JobSet adapts a JobSet to the framework.
type JobSet struct {
	*jobsetapi.JobSet
	integration.ByTemplates
}

// newJobSet wraps a JobSet.
func newJobSet(js *jobsetapi.JobSet) *JobSet {
	j := &JobSet{JobSet: js}
	j.ByTemplates = integration.ByTemplates{Job: j}
	return j
}

func (j *JobSet) Object() client.Object { return j.JobSet }

func (j *JobSet) IsSuspended() bool { return ptr.Deref(j.Spec.Suspend, false) }

func (j *JobSet) Suspend() { j.Spec.Suspend = ptr.To(true) }

func (j *JobSet) PodSets() ([]kueue.PodSet, error) {
	podSets, errs := PodSets(j.JobSet)
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return podSets, nil
}

// Templates are the JobSet's pod templates by pod-set name.
func (j *JobSet) Templates() integration.PodTemplates {
	t := integration.PodTemplates{}
	for i := range j.Spec.ReplicatedJobs {
		rj := &j.Spec.ReplicatedJobs[i]
		t[kueue.PodSetReference(rj.Name)] = &rj.Template.Spec.Template
	}
	return t
}

// replicatedJob is the replicated Job a pod set is named after, or nil.
func (j *JobSet) replicatedJob(name kueue.PodSetReference) *jobsetapi.ReplicatedJob {
	for i := range j.Spec.ReplicatedJobs {
		if kueue.PodSetReference(j.Spec.ReplicatedJobs[i].Name) == name {
			return &j.Spec.ReplicatedJobs[i]
		}
	}
	return nil
}

// LetRun unsuspends the JobSet (ByTemplates runs it).
func (j *JobSet) LetRun() { j.Spec.Suspend = ptr.To(false) }

// Finished reads the JobSet's terminal conditions.
func (j *JobSet) Finished() (bool, bool, string) {
	if c := meta.FindStatusCondition(j.Status.Conditions, string(jobsetapi.JobSetCompleted)); c != nil && c.Status == "True" {
		return true, true, integration.MessageOr(c.Message, "JobSet finished successfully")
	}
	if c := meta.FindStatusCondition(j.Status.Conditions, string(jobsetapi.JobSetFailed)); c != nil && c.Status == "True" {
		return true, false, integration.MessageOr(c.Message, "JobSet failed")
	}
	return false, false, ""
}

// Active: a child Job still has pods pending or running.
func (j *JobSet) Active() bool {
	for _, s := range j.Status.ReplicatedJobsStatus {
		if s.Active > 0 {
			return true
		}
	}
	return false
}

// ReclaimablePods: the pods of a replicated Job's succeeded Jobs never run
// again while the JobSet runs on.
func (j *JobSet) ReclaimablePods() []kueue.ReclaimablePod {
	var out []kueue.ReclaimablePod
	for _, s := range j.Status.ReplicatedJobsStatus {
		rj := j.replicatedJob(kueue.PodSetReference(s.Name))
		if rj == nil || s.Succeeded <= 0 {
			continue
		}
		out = append(out, kueue.ReclaimablePod{Name: kueue.PodSetReference(s.Name), Count: min(s.Succeeded, replicas(rj)) * podsPerJob(rj)})
	}
	return out
}

// ManagedElsewhere names a JobSet controller other than the built-in one
// (MultiKueue's is sluice's own, and has no JobSet dispatch yet: the
// MultiKueue check rejects its Workload).
func (j *JobSet) ManagedElsewhere() string {
	if by := ptr.Deref(j.Spec.ManagedBy, jobsetapi.JobSetControllerName); by != jobsetapi.JobSetControllerName && by != kueue.MultiKueueControllerName {
		return by
	}
	return ""
}

// ReadyPods counts the pods of the child Jobs that are ready (all their
// pods ready or succeeded).
func (j *JobSet) ReadyPods() int32 {
	var ready int32
	for _, s := range j.Status.ReplicatedJobsStatus {
		if rj := j.replicatedJob(kueue.PodSetReference(s.Name)); rj != nil {
			ready += max(0, min(s.Ready, replicas(rj))) * podsPerJob(rj)
		}
	}
	return ready
}
