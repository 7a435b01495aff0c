package controller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	ctrl "sigs.k8s.io/controller-runtime"
)

// Setup registers the field indexes and every reconciler of this package.
func Setup(ctx context.Context, mgr ctrl.Manager) error {
	if err := SetupIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	c := mgr.GetClient()
	reconcilers := []interface {
		SetupWithManager(ctrl.Manager) error
	}{
		&ResourceFlavorReconciler{Client: c},
		&ClusterQueueReconciler{Client: c},
		&LocalQueueReconciler{Client: c},
		&CohortReconciler{Client: c, Recorder: mgr.GetEventRecorder("sluice-cohort-controller")},
	}
	for _, r := range reconcilers {
		if err := r.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("setting up %T: %w", r, err)
		}
	}
	return nil
}

// ignoreConflict drops a write conflict: the cache was behind the API
// server, and the newer version's watch event reconciles the object again.
func ignoreConflict(res ctrl.Result, err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) {
		return res, nil
	}
	return res, err
}
