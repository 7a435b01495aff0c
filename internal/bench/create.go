package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// createAttempts bounds the tries of one creation; the API server may shed
// load (429) or time out under saturation.
const createAttempts = 5

// createOnSchedule creates the plan's Workloads in ns, each at start plus
// its offset, with creators requests in flight at most. before is called
// just before each first attempt; created, if set, gets each created object.
// It returns the number of create requests sent.
func createOnSchedule(ctx context.Context, c client.Client, ns string, plan []PlannedWorkload, creators int, start time.Time,
	before func(i int, at time.Time), created func(i int, wl *kueue.Workload)) (int64, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	jobs := make(chan int)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		requests int64
	)
	for range max(1, creators) {
		wg.Go(func() {
			for i := range jobs {
				if before != nil {
					before(i, time.Now())
				}
				wl, sent, err := createOne(ctx, c, newWorkload(ns, plan[i]))
				mu.Lock()
				requests += sent
				mu.Unlock()
				if err != nil {
					cancel(err)
					continue
				}
				if created != nil {
					created(i, wl)
				}
			}
		})
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
dispatch:
	for i := range plan {
		if wait := time.Until(start.Add(plan[i].At)); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-ctx.Done():
				break dispatch
			}
		}
		select {
		case jobs <- i:
		case <-ctx.Done():
			break dispatch
		}
	}
	close(jobs)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return requests, err
	}
	return requests, nil
}

func createOne(ctx context.Context, c client.Client, wl *kueue.Workload) (*kueue.Workload, int64, error) {
	var err error
	for attempt := 1; attempt <= createAttempts; attempt++ {
		err = c.Create(ctx, wl)
		switch {
		case err == nil:
			return wl, int64(attempt), nil
		case apierrors.IsAlreadyExists(err) && attempt > 1:
			// An earlier attempt that timed out went through.
			return wl, int64(attempt), nil
		case !apierrors.IsTooManyRequests(err) && !apierrors.IsServerTimeout(err) && !apierrors.IsTimeout(err):
			return nil, int64(attempt), fmt.Errorf("creating Workload %s/%s: %w", wl.Namespace, wl.Name, err)
		}
	}
	return nil, createAttempts, fmt.Errorf("creating Workload %s/%s after %d attempts: %w", wl.Namespace, wl.Name, createAttempts, err)
}
