package manager

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A build that fails (the API server out of reach) is tried again until it
// succeeds; one that never does ends with the context, without an error
// that would stop the manager.
func TestRetryUntilBuilt(t *testing.T) {
	calls := 0
	built, err := retryUntilBuilt(t.Context(), func() (*int, error) {
		calls++
		if calls < 2 {
			return nil, errors.New("connection refused")
		}
		v := 7
		return &v, nil
	})
	if err != nil || built == nil || *built != 7 || calls != 2 {
		t.Errorf("got %v, %v after %d calls", built, err, calls)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	built, err = retryUntilBuilt(ctx, func() (*int, error) { return nil, errors.New("connection refused") })
	if built != nil || err != nil {
		t.Errorf("a build that never succeeds: %v, %v", built, err)
	}
}
