package framework

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Timeout bounds every wait for the cluster to converge.
const Timeout = 30 * time.Second

// Eventually polls cond until it returns true or Timeout passes; the last
// error cond returned explains a failure.
func Eventually(t testing.TB, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, Timeout, true,
		func(ctx context.Context) (bool, error) {
			ok, err := cond(ctx)
			if ctx.Err() == nil || last == nil {
				// An error caused by the deadline itself explains nothing.
				last = err
			}
			return ok && err == nil, nil
		})
	if err != nil {
		t.Fatalf("timed out after %s waiting for %s (last error: %v)", Timeout, what, last)
	}
}

// Update applies mutate to the latest version of obj and writes it,
// retrying on conflicts with controllers that write the same object.
func Update(t testing.TB, c client.Client, obj client.Object, mutate func()) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		mutate()
		return c.Update(context.Background(), obj)
	})
	if err != nil {
		t.Fatalf("updating %T %s: %v", obj, obj.GetName(), err)
	}
}

// WaitFor waits until the object, read from the API server, satisfies
// cond, and returns it.
func WaitFor[T client.Object](t testing.TB, c client.Client, obj T, what string, cond func(T) error) T {
	t.Helper()
	current := obj.DeepCopyObject().(T)
	Eventually(t, fmt.Sprintf("%s %s", obj.GetName(), what), func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), current); err != nil {
			return false, err
		}
		return true, cond(current)
	})
	return current
}

// Holds checks that cond stays true for d, polling: for what must not
// happen (a Pod that must stay gated), where no event marks that the
// controllers have looked and decided. It is an assertion, never a way to
// wait for something.
func Holds(t testing.TB, what string, d time.Duration, cond func(ctx context.Context) error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		if err := cond(context.Background()); err != nil {
			t.Fatalf("expected %s: %v", what, err)
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}
