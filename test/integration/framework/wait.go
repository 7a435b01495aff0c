package framework

import (
	"context"
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
