package job

import (
	"context"
	"encoding/json"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
	sluicewebhook "github.com/sluicehq/sluice/internal/webhook"
)

// +kubebuilder:webhook:path=/mutate-batch-v1-job,mutating=true,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=batch,resources=jobs,verbs=create;update,versions=v1,name=mjob.kueue.x-k8s.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-batch-v1-job,mutating=false,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=batch,resources=jobs,verbs=create;update,versions=v1,name=vjob.kueue.x-k8s.io,admissionReviewVersions=v1

// Webhook suspends the Jobs sluice queues as they are created, and rejects
// queueing labels and annotations that can't work. With the batch/job
// framework disabled it lets every Job through.
type Webhook struct {
	Enabled bool
	Policy  *integration.Policy
	// Reader reads LocalQueues and Namespaces (the manager's cache).
	Reader client.Reader
	// ClassReader reads WorkloadPriorityClasses (directly: they are few and
	// read only here and when a Workload is created).
	ClassReader client.Reader
	// MultiKueue: a new Job queued to a ClusterQueue with a MultiKueue
	// admission check gets spec.managedBy MultiKueue, so that it is
	// dispatched to a worker instead of running here.
	MultiKueue bool
}

// SetupWebhook registers both webhooks of batch Jobs.
func SetupWebhook(mgr ctrl.Manager, w *Webhook) error {
	return ctrl.NewWebhookManagedBy(mgr, &batchv1.Job{}).WithDefaulter(w).WithValidator(w).Complete()
}

// Default suspends a queued Job and names the namespace's default
// LocalQueue on it when that is where it goes. On update, a Job sluice
// started whose pod count rises is suspended in the same update.
func (w *Webhook) Default(ctx context.Context, job *batchv1.Job) error {
	if !w.Enabled || (&Job{job}).ManagedElsewhere() != "" {
		return nil
	}
	if req, err := admission.RequestFromContext(ctx); err == nil && req.Operation == admissionv1.Update {
		return suspendIfGrown(req, job)
	}
	decision, err := w.Policy.Decide(ctx, w.Reader, job)
	if err != nil || !decision.Managed {
		return err
	}
	if decision.Defaulted {
		if job.Labels == nil {
			job.Labels = map[string]string{}
		}
		job.Labels[kueue.QueueNameLabel] = decision.QueueName
	}
	job.Spec.Suspend = ptr.To(true)
	if w.MultiKueue && job.Spec.ManagedBy == nil {
		dispatched, err := integration.QueueDispatches(ctx, w.Reader, job.Namespace, decision.QueueName)
		if err != nil {
			return err
		}
		if dispatched {
			job.Spec.ManagedBy = ptr.To(kueue.MultiKueueControllerName)
		}
	}
	return nil
}

// suspendIfGrown suspends a running Job that sluice started (it carries
// the originals sluice restores) when its pod count rises beyond what it
// ran with: raised parallelism would otherwise let the Job controller
// create pods beyond the admission before the reconciler could stop it.
// Suspended, it stops, and its Workload queues again with the new count.
func suspendIfGrown(req admission.Request, job *batchv1.Job) error {
	if _, started := job.Annotations[integration.OriginalPodSetsAnnotation]; !started || ptr.Deref(job.Spec.Suspend, false) {
		return nil
	}
	old := &batchv1.Job{}
	if err := json.Unmarshal(req.OldObject.Raw, old); err != nil {
		return fmt.Errorf("decoding the Job before the update: %w", err)
	}
	if Count(job) > Count(old) {
		job.Spec.Suspend = ptr.To(true)
	}
	return nil
}

func (w *Webhook) ValidateCreate(ctx context.Context, job *batchv1.Job) (admission.Warnings, error) {
	if !w.Enabled {
		return nil, nil
	}
	errs := validateJob(job)
	errs = append(errs, w.validatePriorityClass(ctx, job)...)
	amountErrs, err := w.validateAmounts(ctx, job)
	if err != nil {
		return nil, err
	}
	errs = append(errs, amountErrs...)
	if job.Spec.Template.Annotations[kueue.StandaloneAnnotation] == "true" {
		decision, err := w.Policy.Decide(ctx, w.Reader, job)
		if err != nil {
			return nil, err
		}
		if decision.Managed {
			errs = append(errs, field.Forbidden(field.NewPath("spec", "template", "metadata", "annotations").Key(kueue.StandaloneAnnotation),
				"pods of a queued Job are already counted by its Workload; remove kueue.x-k8s.io/standalone from the pod template, or the queue-name from the Job"))
		}
	}
	return nil, invalid(job, errs)
}

func (w *Webhook) ValidateUpdate(ctx context.Context, oldJob, newJob *batchv1.Job) (admission.Warnings, error) {
	if !w.Enabled {
		return nil, nil
	}
	errs := validateJob(newJob)
	amountErrs, err := w.validateAmounts(ctx, newJob)
	if err != nil {
		return nil, err
	}
	errs = append(errs, amountErrs...)
	labels := field.NewPath("metadata", "labels")
	oldQueue, newQueue := oldJob.Labels[kueue.QueueNameLabel], newJob.Labels[kueue.QueueNameLabel]
	if oldQueue != newQueue && !ptr.Deref(oldJob.Spec.Suspend, false) {
		errs = append(errs, field.Forbidden(labels.Key(kueue.QueueNameLabel), "can change only while the Job is suspended"))
	}
	annotations := field.NewPath("metadata", "annotations")
	if oldJob.Annotations[kueue.StandaloneAnnotation] != newJob.Annotations[kueue.StandaloneAnnotation] {
		errs = append(errs, field.Forbidden(annotations.Key(kueue.StandaloneAnnotation), "is immutable: set it when the Job is created"))
	}
	if oldJob.Labels[kueue.PriorityClassLabel] != newJob.Labels[kueue.PriorityClassLabel] {
		errs = append(errs, w.validatePriorityClass(ctx, newJob)...)
	}
	return nil, invalid(newJob, errs)
}

func (w *Webhook) ValidateDelete(context.Context, *batchv1.Job) (admission.Warnings, error) {
	return nil, nil
}

// validateJob checks the queueing labels and annotations of a Job.
func validateJob(job *batchv1.Job) field.ErrorList {
	var errs field.ErrorList
	labels := field.NewPath("metadata", "labels")
	if q, ok := job.Labels[kueue.QueueNameLabel]; ok {
		for _, msg := range validation.IsDNS1123Subdomain(q) {
			errs = append(errs, field.Invalid(labels.Key(kueue.QueueNameLabel), q, "must be a LocalQueue name: "+msg))
		}
	}
	if _, err := MinCount(job); err != nil {
		errs = append(errs, err)
	}
	if v, ok := job.Annotations[kueue.StandaloneAnnotation]; ok && v != "true" {
		errs = append(errs, field.NotSupported(field.NewPath("metadata", "annotations").Key(kueue.StandaloneAnnotation), v, []string{"true"}))
	}
	return errs
}

// validateAmounts refuses requests sluice can't count exactly in a Job it
// queues; the Job controller's own validation has no upper bound.
func (w *Webhook) validateAmounts(ctx context.Context, job *batchv1.Job) (field.ErrorList, error) {
	errs := sluicewebhook.ValidatePodSpecAmounts(&job.Spec.Template.Spec, field.NewPath("spec", "template", "spec"))
	if len(errs) == 0 || (&Job{job}).ManagedElsewhere() != "" {
		return nil, nil
	}
	decision, err := w.Policy.Decide(ctx, w.Reader, job)
	if err != nil || !decision.Managed {
		return nil, err
	}
	return errs, nil
}

func (w *Webhook) validatePriorityClass(ctx context.Context, job *batchv1.Job) field.ErrorList {
	name, ok := job.Labels[kueue.PriorityClassLabel]
	if !ok {
		return nil
	}
	path := field.NewPath("metadata", "labels").Key(kueue.PriorityClassLabel)
	err := w.ClassReader.Get(ctx, client.ObjectKey{Name: name}, &kueue.WorkloadPriorityClass{})
	switch {
	case apierrors.IsNotFound(err):
		return field.ErrorList{field.NotFound(path, fmt.Sprintf("WorkloadPriorityClass %s", name))}
	case err != nil:
		return field.ErrorList{field.InternalError(path, fmt.Errorf("reading WorkloadPriorityClass %s: %w", name, err))}
	}
	return nil
}

func invalid(job *batchv1.Job, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(batchv1.SchemeGroupVersion.WithKind("Job").GroupKind(), job.Name, errs)
}
