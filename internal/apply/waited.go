package apply

import (
	"context"
	"errors"
	"fmt"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/patch"
	"github.com/sluicehq/sluice/internal/workload"
)

// ErrNotWritten is what Do returns when the Dispatcher stopped (leadership
// lost or the manager stopping) before the write was made.
var ErrNotWritten = errors.New("the write was not made: the dispatcher stopped")

// Do makes a write through the Dispatcher and waits for its one attempt:
// in its object's order, after the writes of that object queued before it
// and never at the same time as one, within the fence. It is for callers
// that must know the result (a reconciler, whose own queue retries it): the
// write is urgent, never merged with another, and not retried here; a write
// the fence held back waits for the fence (or for Stop, which drops it).
func (d *Dispatcher) Do(ctx context.Context, object, kind string, write func(context.Context) error) error {
	result := make(chan error, 1) // one send: either the write ran or it was dropped
	d.Add(Write{Object: object, Kind: kind, Class: Urgent,
		Run: func(ctx context.Context) Outcome {
			result <- write(ctx)
			return Done
		},
		Dropped: func() { result <- ErrNotWritten },
		waited:  true,
	})
	select {
	case err := <-result:
		return err
	case <-ctx.Done():
		return fmt.Errorf("waiting for the %s write of %s: %w", kind, object, ctx.Err())
	}
}

// Status writes a change to a Workload's status made outside the decision
// core (a job finished, its pods are ready, an admission check moved): on
// the Dispatcher, so it is ordered with the admission, eviction and pending
// writes of the same Workload instead of racing them, and on the version
// the caller read (a conflict goes back to it, to read again). mutate
// changes wl and reports whether it changed anything; nothing is sent when
// it did not. wl holds what the API server returned once it is written.
func (w *Workloads) Status(ctx context.Context, wl *kueue.Workload, purpose string, mutate func() bool) (bool, error) {
	base := wl.DeepCopy()
	if !mutate() {
		return false, nil
	}
	sent := wl.DeepCopy() // the caller's wl is not touched by a write it gave up waiting for
	err := w.Dispatcher.Do(ctx, workloadObject(workload.Key(wl)), purpose, func(ctx context.Context) error {
		return w.patchStatus(ctx, sent, patch.OnVersion(base), purpose)
	})
	if err == nil {
		sent.DeepCopyInto(wl)
	}
	return true, err
}
