package controller

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/scheduler"
	"sigs.k8s.io/controller-runtime/pkg/controller"
)

// Options are what the reconcilers need to know of the rest of sluice.
type Options struct {
	// StopsFirst tells whether an evicted workload's job must stop before
	// its reservation is cleared (see WorkloadReconciler).
	StopsFirst func(*kueue.Workload) bool
	// FairSharing turns fair sharing on; nil leaves it off.
	FairSharing *scheduler.FairSharing
}

// Setup registers the field indexes and every reconciler of this package.
func Setup(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	if err := SetupIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	c := mgr.GetClient()
	state := NewState()
	state.Cache.SetFairSharing(opts.FairSharing)
	clk := clock.RealClock{}
	reconcilers := []interface {
		SetupWithManager(ctrl.Manager) error
	}{
		&ResourceFlavorReconciler{Client: c, State: state},
		&ClusterQueueReconciler{Client: c, State: state},
		&LocalQueueReconciler{Client: c, State: state},
		&CohortReconciler{Client: c, Recorder: mgr.GetEventRecorder("sluice-cohort-controller"), State: state},
		&NamespaceReconciler{Client: c, State: state},
		&WorkloadReconciler{Client: c, State: state, Clock: clk, StopsFirst: opts.StopsFirst},
	}
	for _, r := range reconcilers {
		if err := r.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("setting up %T: %w", r, err)
		}
	}
	if err := mgr.Add(&Scheduler{Client: c, APIReader: mgr.GetAPIReader(), State: state, Clock: clk, Writers: AdmissionWriters, MessageRefresh: 5 * time.Second, MessageRefreshesPerSecond: 20}); err != nil {
		return fmt.Errorf("adding the scheduler: %w", err)
	}
	if err := mgr.Add(&QueueStatusWriter{Client: c, State: state, Clock: clk, Period: time.Second, MaxWritesPerPeriod: QueueStatusWritesPerSecond}); err != nil {
		return fmt.Errorf("adding the queue status writer: %w", err)
	}
	return nil
}

// QueueStatusWritesPerSecond bounds the ClusterQueue and LocalQueue status
// writes: a few dozen queues stay current every second, a thousand busy ones
// take turns.
const QueueStatusWritesPerSecond = 25

// AdmissionWriters is how many admission and pending writes the scheduler
// keeps in flight; the benchmark's API ceiling replays with the same number.
const AdmissionWriters = 16

// ignoreConflict drops a write conflict: the cache was behind the API
// server, and the newer version's watch event reconciles the object again.
func ignoreConflict(res ctrl.Result, err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) {
		return res, nil
	}
	return res, err
}

func controllerOptions(workers int) controller.Options {
	return controller.Options{MaxConcurrentReconciles: workers}
}
