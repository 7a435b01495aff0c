package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crwebhook "sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	sluicewebhook "github.com/sluicehq/sluice/internal/webhook"
)

// Template is one object template inside a job (a pod template, or a
// JobSet's child Job template): its metadata, its pod spec when it is a
// pod template, and where it sits in the job.
type Template struct {
	Meta *metav1.ObjectMeta
	// Pod is nil for a template of a non-Pod child.
	Pod  *corev1.PodSpec
	Path *field.Path
}

// JobWebhook is the webhook plumbing every suspendable kind shares: it
// suspends the jobs sluice queues as they are created (naming the
// namespace's default LocalQueue on them when that is where they go), and
// refuses queueing labels and annotations that can't work: a malformed
// queue name, a missing WorkloadPriorityClass, requests sluice can't count,
// standalone children of a queued job (double counting), a queue change
// while running, a standalone annotation added or removed. With the kind's
// framework disabled it lets everything through: the webhook configuration
// is static.
type JobWebhook[T client.Object] struct {
	Enabled bool
	Kind    Kind
	Policy  *Policy
	// Reader reads LocalQueues and Namespaces (the manager's cache).
	Reader client.Reader
	// APIReader reads the API server directly: WorkloadPriorityClasses
	// (they are few), and a Workload the cache may not have caught up with.
	APIReader client.Reader
	// Templates are the job's templates, checked for amounts and standalone.
	Templates func(T) []Template
	// Validate, when set, adds the kind's own rules (min counts, pod-set
	// limits).
	Validate func(T) field.ErrorList
	// QueuedRules, when set, are the kind's rules for the jobs sluice
	// queues only (a JobSet's pod-set limits).
	QueuedRules func(T) field.ErrorList
	// DefaultUpdate, when set, defaults an update of a job the kind must
	// stop (a running Job whose pod count rose).
	DefaultUpdate func(old, updated T)
	// DefaultQueued, when set, runs after a new queued job was suspended.
	DefaultQueued func(ctx context.Context, obj T, placement Placement) error
}

// Register serves the defaulting and validating webhooks of the kind.
func (w *JobWebhook[T]) Register(mgr ctrl.Manager) error {
	obj, ok := w.Kind.NewObject().(T)
	if !ok {
		return fmt.Errorf("the %s webhook's object type does not match its kind", w.Kind.GVK.Kind)
	}
	if _, unstructuredKind := any(obj).(*unstructured.Unstructured); unstructuredKind {
		// The builder takes only the scheme's types (it looks for their
		// conversions); a kind read as unstructured objects is served at
		// the paths the builder would give it.
		server, path := mgr.GetWebhookServer(), strings.ReplaceAll(w.Kind.GVK.Group, ".", "-")+"-"+w.Kind.GVK.Version+"-"+strings.ToLower(w.Kind.GVK.Kind)
		server.Register("/mutate-"+path, crwebhook.WithDefaulter[T](mgr.GetScheme(), w))
		server.Register("/validate-"+path, crwebhook.WithValidator[T](mgr.GetScheme(), w))
		return nil
	}
	return ctrl.NewWebhookManagedBy(mgr, obj).WithDefaulter(w).WithValidator(w).Complete()
}

// Default suspends a queued job. On update it runs DefaultUpdate, and keeps
// a queued job suspended until its Workload is admitted. An object that a
// queued job of another kind runs as is kept within that job's admission,
// whether this kind is enabled or not.
func (w *JobWebhook[T]) Default(ctx context.Context, obj T) error {
	if err := w.keepWithinParent(ctx, obj); err != nil {
		return err
	}
	if !w.Enabled || w.Kind.Wrap(obj).ManagedElsewhere() != "" {
		return nil
	}
	if req, err := crwebhook.RequestFromContext(ctx); err == nil && req.Operation == admissionv1.Update {
		old, err := w.decodeOld(req)
		if err != nil {
			return err
		}
		if w.DefaultUpdate != nil {
			w.DefaultUpdate(old, obj)
		}
		return w.keepSuspended(ctx, obj)
	}
	placement, err := w.Policy.Decide(ctx, w.Reader, obj)
	if err != nil || !placement.Managed {
		return err
	}
	if placement.Defaulted {
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[kueue.QueueNameLabel] = placement.QueueName
		obj.SetLabels(labels)
	}
	w.Kind.Wrap(obj).Suspend()
	if w.DefaultQueued != nil {
		return w.DefaultQueued(ctx, obj, placement)
	}
	return nil
}

func (w *JobWebhook[T]) decodeOld(req crwebhook.Request) (T, error) {
	old, _ := w.Kind.NewObject().(T)
	if err := json.Unmarshal(req.OldObject.Raw, old); err != nil {
		return old, fmt.Errorf("decoding the %s before the update: %w", w.Kind.GVK.Kind, err)
	}
	return old, nil
}

func (w *JobWebhook[T]) ValidateCreate(ctx context.Context, obj T) (crwebhook.Warnings, error) {
	if !w.Enabled {
		return nil, nil
	}
	errs := w.validate(obj)
	errs = append(errs, w.validatePriorityClass(ctx, obj)...)
	ifQueued, err := w.ifQueued(ctx, obj, append(w.queuedRules(obj), w.validateNoStandaloneChildren(obj)...))
	if err != nil {
		return nil, err
	}
	if err := w.invalid(obj, append(errs, ifQueued...)); err != nil {
		return nil, err
	}
	return w.standaloneWarnings(ctx, obj)
}

// EventStandaloneUnderQueuedParent is the warning of an object whose
// standalone opt-in is ignored because its queued parent counts it.
const EventStandaloneUnderQueuedParent = "StandaloneUnderQueuedParent"

// standaloneWarnings warns about a standalone opt-in without effect: a
// child its queued parent's Workload already counts (created by the
// parent's controller, so it is not refused: the controller would retry
// forever).
func (w *JobWebhook[T]) standaloneWarnings(ctx context.Context, obj T) (crwebhook.Warnings, error) {
	if obj.GetAnnotations()[kueue.StandaloneAnnotation] != "true" {
		return nil, nil
	}
	placement, err := w.Policy.Decide(ctx, w.Reader, obj)
	if err != nil || placement.CountedBy == "" {
		return nil, err
	}
	return crwebhook.Warnings{fmt.Sprintf("%s: %s is ignored: the %s's queued %s already counts it in its Workload",
		EventStandaloneUnderQueuedParent, kueue.StandaloneAnnotation, w.Kind.GVK.Kind, placement.CountedBy)}, nil
}

func (w *JobWebhook[T]) ValidateUpdate(ctx context.Context, oldObj, newObj T) (crwebhook.Warnings, error) {
	if !w.Enabled {
		return nil, nil
	}
	errs := w.validate(newObj)
	ifQueued, err := w.ifQueued(ctx, newObj, w.queuedRules(newObj))
	if err != nil {
		return nil, err
	}
	errs = append(errs, ifQueued...)
	labels := field.NewPath("metadata", "labels")
	oldQueue, newQueue := oldObj.GetLabels()[kueue.QueueNameLabel], newObj.GetLabels()[kueue.QueueNameLabel]
	if oldQueue != newQueue && !w.Kind.Wrap(oldObj).IsSuspended() {
		errs = append(errs, field.Forbidden(labels.Key(kueue.QueueNameLabel), fmt.Sprintf("can change only while the %s is suspended", w.Kind.GVK.Kind)))
	}
	if oldObj.GetAnnotations()[kueue.StandaloneAnnotation] != newObj.GetAnnotations()[kueue.StandaloneAnnotation] {
		errs = append(errs, field.Forbidden(field.NewPath("metadata", "annotations").Key(kueue.StandaloneAnnotation),
			fmt.Sprintf("is immutable: set it when the %s is created", w.Kind.GVK.Kind)))
	}
	if oldObj.GetLabels()[kueue.PriorityClassLabel] != newObj.GetLabels()[kueue.PriorityClassLabel] {
		errs = append(errs, w.validatePriorityClass(ctx, newObj)...)
	}
	return nil, w.invalid(newObj, errs)
}

func (w *JobWebhook[T]) ValidateDelete(context.Context, T) (crwebhook.Warnings, error) {
	return nil, nil
}

// ifQueued keeps errs only when sluice queues the job: they are rules of
// queueing, and a job run by another controller never runs pods here. The
// placement is decided only when there is something to keep (it may read
// the job's owner from the API server).
func (w *JobWebhook[T]) ifQueued(ctx context.Context, obj T, errs field.ErrorList) (field.ErrorList, error) {
	if len(errs) == 0 || w.Kind.Wrap(obj).ManagedElsewhere() != "" {
		return nil, nil
	}
	placement, err := w.Policy.Decide(ctx, w.Reader, obj)
	if err != nil || !placement.Managed {
		return nil, err
	}
	return errs, nil
}

// validate checks the queueing labels and annotations every kind shares,
// then the kind's own rules.
func (w *JobWebhook[T]) validate(obj T) field.ErrorList {
	errs := ValidateQueueingMetadata(obj)
	if w.Validate != nil {
		errs = append(errs, w.Validate(obj)...)
	}
	return errs
}

// ValidateQueueingMetadata checks an object's queue-name label and
// standalone annotation.
func ValidateQueueingMetadata(obj client.Object) field.ErrorList {
	var errs field.ErrorList
	if q, ok := obj.GetLabels()[kueue.QueueNameLabel]; ok {
		for _, msg := range validation.IsDNS1123Subdomain(q) {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "labels").Key(kueue.QueueNameLabel), q, "must be a LocalQueue name: "+msg))
		}
	}
	if v, ok := obj.GetAnnotations()[kueue.StandaloneAnnotation]; ok && v != "true" {
		errs = append(errs, field.NotSupported(field.NewPath("metadata", "annotations").Key(kueue.StandaloneAnnotation), v, []string{"true"}))
	}
	return errs
}

// queuedRules are the rules of a job sluice queues: requests sluice can
// count exactly (the kinds' own validation has no upper bound), and the
// kind's QueuedRules.
func (w *JobWebhook[T]) queuedRules(obj T) field.ErrorList {
	var errs field.ErrorList
	if w.QueuedRules != nil {
		errs = w.QueuedRules(obj)
	}
	for _, t := range w.Templates(obj) {
		if t.Pod != nil {
			errs = append(errs, sluicewebhook.ValidatePodSpecAmounts(t.Pod, t.Path.Child("spec"))...)
		}
	}
	return errs
}

// validateNoStandaloneChildren refuses a queued job whose templates carry
// standalone.
func (w *JobWebhook[T]) validateNoStandaloneChildren(obj T) field.ErrorList {
	return StandaloneTemplates(w.Kind.GVK.Kind, w.Templates(obj))
}

// StandaloneTemplates refuses the templates of a queued object of kind
// that carry standalone: its Workload already counts those children, and
// standalone would charge them twice.
func StandaloneTemplates(kind string, templates []Template) field.ErrorList {
	var errs field.ErrorList
	for _, t := range templates {
		if t.Meta.Annotations[kueue.StandaloneAnnotation] != "true" {
			continue
		}
		what := "pods"
		if t.Pod == nil {
			what = "children"
		}
		errs = append(errs, field.Forbidden(t.Path.Child("metadata", "annotations").Key(kueue.StandaloneAnnotation),
			fmt.Sprintf("%s of a queued %s are already counted by its Workload; remove %s from the %s template, or the queue-name from the %s",
				what, kind, kueue.StandaloneAnnotation, templateNoun(t), kind)))
	}
	return errs
}

func templateNoun(t Template) string {
	if t.Pod != nil {
		return "pod"
	}
	return "child"
}

func (w *JobWebhook[T]) validatePriorityClass(ctx context.Context, obj T) field.ErrorList {
	name, ok := obj.GetLabels()[kueue.PriorityClassLabel]
	if !ok {
		return nil
	}
	path := field.NewPath("metadata", "labels").Key(kueue.PriorityClassLabel)
	err := w.APIReader.Get(ctx, client.ObjectKey{Name: name}, &kueue.WorkloadPriorityClass{})
	switch {
	case apierrors.IsNotFound(err):
		return field.ErrorList{field.NotFound(path, fmt.Sprintf("WorkloadPriorityClass %s", name))}
	case err != nil:
		return field.ErrorList{field.InternalError(path, fmt.Errorf("reading WorkloadPriorityClass %s: %w", name, err))}
	}
	return nil
}

func (w *JobWebhook[T]) invalid(obj T, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(w.Kind.GVK.GroupKind(), obj.GetName(), errs)
}
