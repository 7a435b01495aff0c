package pod

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
	sluicewebhook "github.com/sluicehq/sluice/internal/webhook"
)

// +kubebuilder:webhook:path=/mutate--v1-pod,mutating=true,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups="",resources=pods,verbs=create,versions=v1,name=mpod.kueue.x-k8s.io,admissionReviewVersions=v1,reinvocationPolicy=IfNeeded
// +kubebuilder:webhook:path=/validate--v1-pod,mutating=false,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups="",resources=pods,verbs=create;update,versions=v1,name=vpod.kueue.x-k8s.io,admissionReviewVersions=v1

// Messages of the standalone opt-in's notices.
const (
	messageWithoutQueue      = "kueue.x-k8s.io/standalone is set but no LocalQueue applies (no queue-name label, no LocalQueue \"default\" in the namespace): the Pod is not queued"
	messageUnderQueuedParent = "kueue.x-k8s.io/standalone is ignored: the Pod's queued %s %s already counts it in its Workload"
)

// Webhook gates the Pods sluice queues as they are created, and checks the
// opt-in annotations. It is invoked again when a later webhook changed the
// Pod (reinvocationPolicy IfNeeded): LeaderWorkerSet's own webhook labels
// a leader with its group index only then, and Default must see it to put
// the Pod into its group; Default is idempotent. With the pod framework disabled it lets every Pod
// through.
type Webhook struct {
	Enabled bool
	Policy  *integration.Policy
	// Reader reads LocalQueues and Namespaces (the manager's cache).
	Reader client.Reader
	// OwnerReader reads owners for the walk, from the API server.
	OwnerReader client.Reader
	// Notices, when set, turns the warnings into Events on the Pod.
	Notices *Notices
	// KnownOwners are the kinds the owner walk follows besides ReplicaSets.
	KnownOwners map[schema.GroupKind]func() client.Object
	// Groupers put a queued Pod of a kind into its pod group (the kinds'
	// GroupPods).
	Groupers []func(*corev1.Pod)
	// ParentsOnly queues only the Pods a parent's webhook sent (those with
	// pod-suspending-parent): the pod integration is on for the kinds
	// queued through their Pods, not for plain Pods.
	ParentsOnly bool
	// Self is the user the manager acts as: the only one that may take a
	// queued Pod's admission gate off.
	Self string
}

// SetupWebhook registers both webhooks of Pods, and the resize guard.
func SetupWebhook(mgr ctrl.Manager, w *Webhook) error {
	mgr.GetWebhookServer().Register(resizePath, &admission.Webhook{Handler: resizeGuard{w}})
	return ctrl.NewWebhookManagedBy(mgr, &corev1.Pod{}).WithDefaulter(w).WithValidator(w).Complete()
}

// verdict is what the webhook decided for a new Pod.
type verdict struct {
	decision integration.Placement
	// notice is the reason (an event reason) and message of an opt-in
	// without effect.
	notice, message string
}

func optedIn(p *corev1.Pod) bool {
	_, parent := p.Annotations[kueue.PodSuspendingParentAnno]
	return p.Annotations[kueue.StandaloneAnnotation] == "true" || parent
}

// judge applies the rules: the owner (a Pod of an enabled kind is its
// parent's unless it opts in), the namespaces, then, for a Pod that opted
// in, its ancestors (opting in is ignored when the nearest queued one
// counts it), then the queue.
func (w *Webhook) judge(ctx context.Context, p *corev1.Pod) (verdict, error) {
	if _, parent := p.Annotations[kueue.PodSuspendingParentAnno]; w.ParentsOnly && !parent {
		return verdict{}, nil
	}
	// The owner first: it needs no read, and most Pods (a Job's) end here.
	owner := metav1.GetControllerOf(p)
	if owner != nil && !optedIn(p) {
		counted, err := w.ownedByQueuedParent(ctx, p)
		if err != nil || counted {
			return verdict{}, err
		}
	}
	if managed, err := w.Policy.ManagesNamespace(ctx, w.Reader, p.Namespace); err != nil || !managed {
		return verdict{}, err
	}
	if owner != nil && optedIn(p) {
		counted, err := w.countedBy(ctx, p)
		if err != nil {
			return verdict{}, err
		}
		if counted != nil {
			return verdict{notice: EventStandaloneUnderQueuedParent, message: fmt.Sprintf(messageUnderQueuedParent, counted.kind.Kind, counted.obj.GetName())}, nil
		}
	}
	d, err := w.Policy.QueueFor(ctx, w.Reader, p)
	if err != nil {
		return verdict{}, err
	}
	if !d.Managed && optedIn(p) {
		return verdict{notice: EventStandaloneWithoutQueue, message: messageWithoutQueue}, nil
	}
	return verdict{decision: d}, nil
}

// countedBy is the nearest queued ancestor whose Workload counts the Pod
// (a queued batch Job, a queued JobSet above the Pod's Job), or nil. A
// queued Pod parent (a Spark driver) counts only itself and ends the
// search; a disabled kind counts nothing and the search goes on above it;
// an owner that did not make what is below it ends the search (nothing
// above counts what it did not make).
func (w *Webhook) countedBy(ctx context.Context, p *corev1.Pod) (*ancestor, error) {
	chain, err := ancestors(ctx, w.OwnerReader, w.walkable(), p)
	if err != nil {
		return nil, err
	}
	below, belowKind := client.Object(p), podKind
	for i := range chain {
		a := &chain[i]
		counts := w.Policy.MayOwn(a.kind, belowKind) && w.Policy.Counts(a.obj, below)
		made := w.Policy.Made(a.obj, a.kind, below, belowKind)
		below, belowKind = a.obj, a.kind
		if a.kind == podKind {
			if a.obj.GetLabels()[kueue.ManagedLabel] == "true" {
				return nil, nil
			}
			continue
		}
		if !w.Policy.ParentKinds[a.kind] {
			// A kind sluice does not queue counts nothing: the search
			// goes on above it, if it made what is below it.
			if !made {
				return nil, nil
			}
			continue
		}
		if !counts {
			// An enabled kind that did not make what is below it: no
			// ancestor above counts that either.
			return nil, nil
		}
		// Decide says no for a child its own queued parent counts: the
		// next ancestor then answers.
		d, err := w.Policy.Decide(ctx, w.Reader, a.obj)
		if err != nil {
			return nil, err
		}
		if d.Managed {
			return a, nil
		}
	}
	return nil, nil
}

// Default gates, labels and holds a Pod to queue.
func (w *Webhook) Default(ctx context.Context, p *corev1.Pod) error {
	if !w.Enabled {
		return nil
	}
	v, err := w.judge(ctx, p)
	if err != nil || !v.decision.Managed {
		return err
	}
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[kueue.ManagedLabel] = "true"
	if v.decision.Defaulted {
		p.Labels[kueue.QueueNameLabel] = v.decision.QueueName
	}
	for _, group := range w.Groupers {
		group(p)
	}
	if !slices.ContainsFunc(p.Spec.SchedulingGates, isAdmissionGate) {
		p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: kueue.AdmissionSchedulingGate})
	}
	controllerutil.AddFinalizer(p, kueue.ManagedLabel)
	return nil
}

// ValidateCreate checks the opt-in's value and returns the warnings of a
// Pod that opted in without effect.
func (w *Webhook) ValidateCreate(ctx context.Context, p *corev1.Pod) (admission.Warnings, error) {
	if !w.Enabled {
		return nil, nil
	}
	errs := append(validateStandalone(p), validateGroup(p)...)
	if p.Labels[kueue.ManagedLabel] == "true" {
		errs = append(errs, sluicewebhook.ValidatePodSpecAmounts(&p.Spec, field.NewPath("spec"))...)
		groupErrs, err := w.validateGroupName(ctx, p)
		if err != nil {
			return nil, err
		}
		errs = append(errs, groupErrs...)
	}
	if err := invalid(p, errs); err != nil {
		return nil, err
	}
	if !optedIn(p) {
		return nil, nil
	}
	v, err := w.judge(ctx, p)
	if err != nil || v.notice == "" {
		return nil, err
	}
	w.Notices.Add(p.Namespace, p.Name, v.notice, v.message)
	return admission.Warnings{v.notice + ": " + v.message}, nil
}

func (w *Webhook) ValidateUpdate(ctx context.Context, oldPod, newPod *corev1.Pod) (admission.Warnings, error) {
	if !w.Enabled {
		return nil, nil
	}
	errs := append(validateStandalone(newPod), validateGroup(newPod)...)
	errs = append(errs, w.validateStaysQueued(ctx, oldPod, newPod)...)
	if oldPod.Labels[kueue.PodGroupNameLabel] != newPod.Labels[kueue.PodGroupNameLabel] {
		errs = append(errs, field.Forbidden(field.NewPath("metadata", "labels").Key(kueue.PodGroupNameLabel), "is immutable"))
	}
	if oldPod.Annotations[kueue.StandaloneAnnotation] != newPod.Annotations[kueue.StandaloneAnnotation] {
		errs = append(errs, field.Forbidden(field.NewPath("metadata", "annotations").Key(kueue.StandaloneAnnotation), "is immutable: set it when the Pod is created"))
	}
	return nil, invalid(newPod, errs)
}

func (w *Webhook) ValidateDelete(context.Context, *corev1.Pod) (admission.Warnings, error) {
	return nil, nil
}

func validateStandalone(p *corev1.Pod) field.ErrorList {
	if v, ok := p.Annotations[kueue.StandaloneAnnotation]; ok && v != "true" {
		return field.ErrorList{field.NotSupported(field.NewPath("metadata", "annotations").Key(kueue.StandaloneAnnotation), v, []string{"true"})}
	}
	return nil
}

// validateGroup: a pod group is named and counted together, with a
// positive count.
func validateGroup(p *corev1.Pod) field.ErrorList {
	name, hasName := p.Labels[kueue.PodGroupNameLabel]
	count, hasCount := p.Annotations[kueue.PodGroupTotalCountAnno]
	labels := field.NewPath("metadata", "labels")
	annotations := field.NewPath("metadata", "annotations")
	switch {
	case hasName && !hasCount:
		return field.ErrorList{field.Required(annotations.Key(kueue.PodGroupTotalCountAnno), "a Pod with "+kueue.PodGroupNameLabel+" needs the group's total count")}
	case hasCount && !hasName:
		return field.ErrorList{field.Required(labels.Key(kueue.PodGroupNameLabel), "a Pod with "+kueue.PodGroupTotalCountAnno+" needs the group's name")}
	case !hasName:
		return nil
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(name) {
		errs = append(errs, field.Invalid(labels.Key(kueue.PodGroupNameLabel), name, "must be a valid Workload name: "+msg))
	}
	if n, err := strconv.Atoi(count); err != nil || n < 1 {
		errs = append(errs, field.Invalid(annotations.Key(kueue.PodGroupTotalCountAnno), count, "must be a positive integer"))
	}
	return errs
}

func invalid(p *corev1.Pod, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Pod").GroupKind(), p.Name, errs)
}
