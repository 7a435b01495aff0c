package webhook

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/priority"
)

// +kubebuilder:webhook:path=/mutate-kueue-x-k8s-io-v1beta2-workload,mutating=true,failurePolicy=fail,sideEffects=None,groups=kueue.x-k8s.io,resources=workloads,verbs=create,versions=v1beta2,name=mworkload.kueue.x-k8s.io,timeoutSeconds=10,admissionReviewVersions=v1
// +kubebuilder:rbac:groups=scheduling.k8s.io,resources=priorityclasses,verbs=get
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloadpriorityclasses,verbs=get

// PriorityDefaulter resolves a new Workload's priorityClassRef into
// spec.priority when the creator left it out, so the priority is fixed at
// creation: later changes of the class don't change existing Workloads.
type PriorityDefaulter struct {
	// Reader reads priority classes (directly: classes are few and
	// Workload creation is the only reader).
	Reader client.Reader
}

// Default sets spec.priority from the class, or rejects a class that
// doesn't exist.
func (d *PriorityDefaulter) Default(ctx context.Context, wl *kueue.Workload) error {
	ref := wl.Spec.PriorityClassRef
	if ref == nil || wl.Spec.Priority != nil {
		return nil
	}
	value, err := d.classValue(ctx, ref)
	if err != nil {
		return err
	}
	wl.Spec.Priority = &value
	return nil
}

func (d *PriorityDefaulter) classValue(ctx context.Context, ref *kueue.PriorityClassRef) (int32, error) {
	value, err := priority.ClassValue(ctx, d.Reader, ref)
	switch {
	case errors.Is(err, priority.ErrUnknownKind):
		return 0, apierrors.NewInvalid(kueue.GroupVersion.WithKind("Workload").GroupKind(), "",
			field.ErrorList{field.NotSupported(field.NewPath("spec", "priorityClassRef", "kind"), ref.Kind, []string{string(kueue.WorkloadPriorityClassKind), string(kueue.PodPriorityClassKind)})})
	case apierrors.IsNotFound(err):
		return 0, apierrors.NewInvalid(kueue.GroupVersion.WithKind("Workload").GroupKind(), "",
			field.ErrorList{field.NotFound(field.NewPath("spec", "priorityClassRef", "name"), fmt.Sprintf("%s %s", ref.Kind, ref.Name))})
	}
	return value, err
}
