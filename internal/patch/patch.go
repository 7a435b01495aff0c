// Package patch owns the one way sluice writes a change to an object it
// read: a JSON merge patch of the difference, carrying the read's
// resourceVersion, so that a write made on a stale read fails with a
// conflict instead of overwriting what its writer never saw. It decides
// nothing about what to change, and neither retries nor reads: a conflict
// goes back to the caller, whose next read decides again.
package patch

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// OnVersion is the merge patch from base to whatever it is applied to,
// valid only while the object is still at base's resourceVersion.
func OnVersion(base client.Object) client.Patch {
	return client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})
}

// Status changes obj in place with mutate and writes the change to its
// status subresource. mutate reports whether it changed anything; when it
// did not, nothing is sent and Status reports false.
func Status(ctx context.Context, c client.Client, obj client.Object, mutate func() bool) (bool, error) {
	return write(obj, mutate, func(p client.Patch) error { return c.Status().Patch(ctx, obj, p) })
}

// Object is Status for the object itself (its metadata and spec).
func Object(ctx context.Context, c client.Client, obj client.Object, mutate func() bool) (bool, error) {
	return write(obj, mutate, func(p client.Patch) error { return c.Patch(ctx, obj, p) })
}

func write(obj client.Object, mutate func() bool, send func(client.Patch) error) (bool, error) {
	p := OnVersion(obj.DeepCopyObject().(client.Object))
	if !mutate() {
		return false, nil
	}
	return true, send(p)
}

// Always is a mutation that always changes the object: change, then true.
func Always(change func()) func() bool {
	return func() bool { change(); return true }
}
