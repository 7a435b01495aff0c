package pod

import (
	"context"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/apis/scheme"
)

// +kubebuilder:webhook:path=/validate--v1-pod-resize,mutating=false,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups="",resources=pods/resize,verbs=update,versions=v1,name=vpodresize.kueue.x-k8s.io,admissionReviewVersions=v1

// resizePath is where the resize guard is served.
const resizePath = "/validate--v1-pod-resize"

// resizeGuard refuses an in-place resize (pods/resize) of a Pod a queued
// Workload counts: a Pod sluice queues itself, or one a queued job's
// controller made (a batch Job's, a JobSet's, a Ray cluster's...). Its
// Workload holds the quota of the requests the Pod was admitted with, and
// larger ones would run beyond it. It is served whatever integrations are
// enabled (the Pod webhook proper only with the pod integration): every
// kind's Pods can be resized.
type resizeGuard struct{ w *Webhook }

func (g resizeGuard) Handle(ctx context.Context, req admission.Request) admission.Response {
	decoder := admission.NewDecoder(scheme.Scheme)
	oldPod, newPod := &corev1.Pod{}, &corev1.Pod{}
	if err := decoder.DecodeRaw(req.OldObject, oldPod); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding the Pod before the resize: %w", err))
	}
	if err := decoder.DecodeRaw(req.Object, newPod); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding the resized Pod: %w", err))
	}
	changed := changedResources(oldPod, newPod)
	if len(changed) == 0 {
		return admission.Allowed("")
	}
	why := "its Workload holds the quota of the requests it was admitted with"
	if oldPod.Labels[kueue.ManagedLabel] != "true" {
		counter, err := g.w.countedBy(ctx, newPod)
		if err != nil {
			return admission.Errored(http.StatusInternalServerError, err)
		}
		if counter == nil {
			return admission.Allowed("")
		}
		why = fmt.Sprintf("the Workload of %s %s holds the quota of the requests it was admitted with", counter.kind.Kind, counter.obj.GetName())
	}
	var errs field.ErrorList
	for _, i := range changed {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "containers").Index(i).Child("resources"),
			fmt.Sprintf("can't change on a Pod sluice queues: %s; create a new Pod (or job) instead", why)))
	}
	status := apierrors.NewInvalid(Kind.GVK.GroupKind(), newPod.Name, errs).Status()
	return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: &status}}
}

// changedResources are the indexes of the containers whose resources a
// resize changes.
func changedResources(oldPod, newPod *corev1.Pod) []int {
	var changed []int
	for i := range newPod.Spec.Containers {
		if i < len(oldPod.Spec.Containers) && !equality.Semantic.DeepEqual(oldPod.Spec.Containers[i].Resources, newPod.Spec.Containers[i].Resources) {
			changed = append(changed, i)
		}
	}
	return changed
}
