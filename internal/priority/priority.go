// Package priority resolves the priority classes a Workload may name
// (WorkloadPriorityClass, or the pods' PriorityClass) into a value. It reads
// the classes through the reader it is given and must not write anything.
package priority

import (
	"context"
	"fmt"

	schedulingv1 "k8s.io/api/scheduling/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// ErrUnknownKind is returned for a priorityClassRef of a kind that is neither
// WorkloadPriorityClass nor PriorityClass.
var ErrUnknownKind = fmt.Errorf("priorityClassRef kind must be %s or %s", kueue.WorkloadPriorityClassKind, kueue.PodPriorityClassKind)

// ClassValue is the value of the class ref names. A class that doesn't exist
// is an error for which apierrors.IsNotFound holds (the API error is wrapped).
func ClassValue(ctx context.Context, reader client.Reader, ref *kueue.PriorityClassRef) (int32, error) {
	key := client.ObjectKey{Name: ref.Name}
	switch ref.Kind {
	case kueue.WorkloadPriorityClassKind:
		wpc := &kueue.WorkloadPriorityClass{}
		if err := reader.Get(ctx, key, wpc); err != nil {
			return 0, fmt.Errorf("reading WorkloadPriorityClass %s: %w", ref.Name, err)
		}
		return wpc.Value, nil
	case kueue.PodPriorityClassKind:
		pc := &schedulingv1.PriorityClass{}
		if err := reader.Get(ctx, key, pc); err != nil {
			return 0, fmt.Errorf("reading PriorityClass %s: %w", ref.Name, err)
		}
		return pc.Value, nil
	default:
		return 0, ErrUnknownKind
	}
}
