package job

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
)

// JobControllerName is the managedBy value of Jobs the built-in Job
// controller runs; any other value belongs to another controller.
const JobControllerName = "kubernetes.io/job-controller"

// Kind is batch/v1 Job in the job framework.
var Kind = integration.Kind{
	Framework: configapi.FrameworkBatchJob,
	GVK:       batchv1.SchemeGroupVersion.WithKind("Job"),
	NewObject: func() client.Object { return &batchv1.Job{} },
	NewList:   func() client.ObjectList { return &batchv1.JobList{} },
	Wrap:      func(o client.Object) integration.Job { return &Job{o.(*batchv1.Job)} },
	Children:  []schema.GroupKind{{Kind: "Pod"}},
	Makes:     selects,
	PodsGone: func(ctx context.Context, reader client.Reader, namespace, _ string, uid types.UID) (bool, error) {
		// The Job controller labels its pods with the Job's UID; a Job
		// deleted with orphan propagation leaves them running, still
		// holding what its Workload reserved.
		return integration.PodsGoneByLabel(ctx, reader, namespace, batchv1.ControllerUidLabel, string(uid))
	},
	Remote: RemoteAdapter{},
}

// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=batch,resources=jobs/status,verbs=get

// Job adapts a batch/v1 Job to the framework.
type Job struct{ *batchv1.Job }

func (j *Job) Object() client.Object { return j.Job }

func (j *Job) IsSuspended() bool { return ptr.Deref(j.Spec.Suspend, false) }

func (j *Job) Suspend() { j.Spec.Suspend = ptr.To(true) }

func (j *Job) PodSets() ([]kueue.PodSet, error) {
	podSets, err := PodSets(j.Job)
	if err != nil {
		return nil, err
	}
	return podSets, nil
}

func (j *Job) Originals() []integration.PodSetInfo {
	return []integration.PodSetInfo{integration.Original(PodSetName, ptr.Deref(j.Spec.Parallelism, 1), &j.Spec.Template)}
}

// Run injects the admission and unsuspends. A partial admission runs with
// the admitted number of pods as the Job's parallelism.
func (j *Job) Run(infos []integration.PodSetInfo) error {
	if len(infos) != 1 {
		return fmt.Errorf("a Job has one pod set, the admission has %d", len(infos))
	}
	if err := integration.Inject(&j.Spec.Template, infos[0]); err != nil {
		return err
	}
	if infos[0].Count > 0 && infos[0].Count < Count(j.Job) {
		j.Spec.Parallelism = ptr.To(infos[0].Count)
	}
	j.Spec.Suspend = ptr.To(false)
	return nil
}

func (j *Job) Restore(originals []integration.PodSetInfo) bool {
	if len(originals) != 1 {
		return false
	}
	changed := integration.Restore(&j.Spec.Template, originals[0])
	// Only a partial admission lowers parallelism; one raised since is the
	// user's edit (what the job queues again with), not to be undone.
	if original := originals[0].Count; original > 0 && ptr.Deref(j.Spec.Parallelism, 1) < original {
		j.Spec.Parallelism = ptr.To(original)
		changed = true
	}
	return changed
}

// Finished reads the Job's terminal conditions, and the early ones of
// successPolicy (SuccessCriteriaMet) and podFailurePolicy/backoffLimit
// (FailureTarget): the outcome is decided even while pods terminate.
func (j *Job) Finished() (bool, bool, string) {
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete, batchv1.JobSuccessCriteriaMet:
			return true, true, message(c, "Job finished successfully")
		case batchv1.JobFailed, batchv1.JobFailureTarget:
			return true, false, message(c, "Job failed")
		}
	}
	return false, false, ""
}

func message(c batchv1.JobCondition, fallback string) string {
	if c.Message != "" {
		return c.Message
	}
	if c.Reason != "" {
		return fmt.Sprintf("%s: %s", fallback, c.Reason)
	}
	return fallback
}

// Active: pods still run or terminate, or the Job controller hasn't yet
// acknowledged a suspension (it resets startTime once the pods are gone;
// until then the pod template can't be restored).
func (j *Job) Active() bool {
	if j.Status.Active > 0 || ptr.Deref(j.Status.Terminating, 0) > 0 {
		return true
	}
	return j.IsSuspended() && j.Status.StartTime != nil
}

// ReclaimablePods: once fewer completions remain than pods run in
// parallel, the surplus pods never start again.
func (j *Job) ReclaimablePods() []kueue.ReclaimablePod {
	if j.Spec.Completions == nil {
		return nil
	}
	// Count, not parallelism: a parallelism above the completions never
	// ran more pods than the completions, so only those can be reclaimed.
	count := Count(j.Job)
	remaining := *j.Spec.Completions - j.Status.Succeeded
	if remaining >= count {
		return nil
	}
	return []kueue.ReclaimablePod{{Name: PodSetName, Count: count - max(remaining, 0)}}
}

// ManagedElsewhere: a Job run by MultiKueue is queued here like any
// other (its Workload reserves this cluster's quota before it is
// dispatched); the Job controller leaves it alone, so it never runs pods
// here.
func (j *Job) ManagedElsewhere() string {
	if by := ptr.Deref(j.Spec.ManagedBy, JobControllerName); by != JobControllerName && by != kueue.MultiKueueControllerName {
		return by
	}
	return ""
}

// ReadyPods counts the Job's pods that are ready or succeeded.
func (j *Job) ReadyPods() int32 {
	return ptr.Deref(j.Status.Ready, 0) + j.Status.Succeeded
}
