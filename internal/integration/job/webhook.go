package job

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
)

// +kubebuilder:webhook:path=/mutate-batch-v1-job,mutating=true,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=batch,resources=jobs,verbs=create;update,versions=v1,name=mjob.kueue.x-k8s.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-batch-v1-job,mutating=false,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=batch,resources=jobs,verbs=create;update,versions=v1,name=vjob.kueue.x-k8s.io,admissionReviewVersions=v1

// Registration is batch/v1 Job in the list of kinds.
var Registration = integration.JobRegistration(&Kind, "", func(deps integration.Deps) func(ctrl.Manager) error {
	return newWebhook(deps).Register
})

// newWebhook is the Job webhook: the shared plumbing of
// integration.JobWebhook, with a Job's min-parallelism rule, the
// suspension of a running Job whose pod count rises, and, with
// MultiKueue, spec.managedBy on a Job queued to a MultiKueue ClusterQueue.
func newWebhook(deps integration.Deps) *integration.JobWebhook[*batchv1.Job] {
	w := &integration.JobWebhook[*batchv1.Job]{
		Enabled: deps.Enabled, Kind: Kind, Policy: deps.Policy, Reader: deps.Reader, APIReader: deps.APIReader,
		Templates: func(job *batchv1.Job) []integration.Template {
			return []integration.Template{{Meta: &job.Spec.Template.ObjectMeta, Pod: &job.Spec.Template.Spec, Path: field.NewPath("spec", "template")}}
		},
		Validate:      validateJob,
		DefaultUpdate: suspendIfGrown,
	}
	if deps.MultiKueue {
		w.DefaultQueued = func(ctx context.Context, job *batchv1.Job, placement integration.Placement) error {
			return dispatchToMultiKueue(ctx, deps.Reader, job, placement)
		}
	}
	return w
}

// dispatchToMultiKueue gives a new Job queued to a ClusterQueue with a
// MultiKueue admission check spec.managedBy MultiKueue, so that it is
// dispatched to a worker instead of running here.
func dispatchToMultiKueue(ctx context.Context, reader client.Reader, job *batchv1.Job, placement integration.Placement) error {
	if job.Spec.ManagedBy != nil {
		return nil
	}
	dispatched, err := integration.QueueDispatches(ctx, reader, job.Namespace, placement.QueueName)
	if err != nil || !dispatched {
		return err
	}
	job.Spec.ManagedBy = ptr.To(kueue.MultiKueueControllerName)
	return nil
}

// suspendIfGrown suspends a running Job that sluice started when its pod
// count rises beyond what it ran with: raised parallelism would otherwise
// let the Job controller create pods beyond the admission before the
// reconciler could stop it. Suspended, it stops, and its Workload queues
// again with the new count.
func suspendIfGrown(old, job *batchv1.Job) {
	integration.SuspendIfGrown(&Job{old}, &Job{job})
}

// validateJob checks a Job's own queueing annotation, min-parallelism.
func validateJob(job *batchv1.Job) field.ErrorList {
	if _, err := MinCount(job); err != nil {
		return field.ErrorList{err}
	}
	return nil
}
