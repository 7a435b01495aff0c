package framework

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
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
			last = err
			return ok && err == nil, nil
		})
	if err != nil {
		t.Fatalf("timed out after %s waiting for %s (last error: %v)", Timeout, what, last)
	}
}
