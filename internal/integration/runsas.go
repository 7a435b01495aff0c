package integration

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// keepWithinParent keeps an object that a queued job runs as (a TrainJob's
// JobSet: Kind.RunsAs) suspended, in the write itself, unless the job's
// Workload is admitted and covers what the object would run. Whoever
// unsuspends or grows it (the job's controller rebuilding it from a
// runtime changed after admission, the tenant by hand) runs nothing beyond
// the job's quota; the job's reconciler then sees the object beyond the
// admission and queues the job again with its new shape. An object that
// names such a job as its controller but is not the one it runs as
// (another name) never runs: the job's Workload does not count it.
func (w *JobWebhook[T]) keepWithinParent(ctx context.Context, obj T) error {
	child := w.Kind.Wrap(obj)
	if child.IsSuspended() {
		return nil
	}
	parentKind, ref, ok := w.Policy.RunsAsParent(obj)
	if !ok {
		return nil
	}
	parent := parentKind.NewObject()
	if err := w.APIReader.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: ref.Name}, parent); err != nil {
		if apierrors.IsNotFound(err) {
			return nil // a dangling reference: the object is judged as if it had no owner
		}
		return fmt.Errorf("reading %s %s, which %s %s runs for: %w", ref.Kind, ref.Name, w.Kind.GVK.Kind, obj.GetName(), err)
	}
	if parent.GetUID() != ref.UID || parentKind.Wrap(parent).ManagedElsewhere() != "" {
		return nil
	}
	placement, err := w.Policy.Decide(ctx, w.Reader, parent)
	if err != nil || !placement.Managed {
		return err
	}
	if obj.GetName() != parent.GetName() {
		child.Suspend()
		return nil
	}
	wl, err := admittedWorkload(ctx, parentKind, parent, w.Reader, w.APIReader)
	if err != nil {
		return err
	}
	if wl == nil || beyondAdmission(child, wl) != "" {
		child.Suspend()
	}
	return nil
}
