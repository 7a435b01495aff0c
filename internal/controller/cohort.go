package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/apply"
)

// CohortReconciler reports parent cycles. A Cohort's status has no
// conditions in the API, so a cycle is told by a Warning event on every
// member; the ClusterQueues below it turn inactive through their own
// reconciler.
type CohortReconciler struct {
	Client   client.Client
	Recorder recorder.EventRecorder
	Tracker  *apply.Tracker
}

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=cohorts,verbs=get;list;watch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=cohorts/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch;update
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch;update

func (r *CohortReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cohort := &kueue.Cohort{}
	if err := r.Client.Get(ctx, req.NamespacedName, cohort); err != nil {
		if apierrors.IsNotFound(err) {
			r.Tracker.DeleteCohort(req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	r.Tracker.SetCohort(cohort)
	ancestry, err := cohortAncestry(ctx, r.Client, cohort.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	if ancestry.HasCycle() {
		r.Recorder.Eventf(cohort, nil, corev1.EventTypeWarning, kueue.ReasonCohortCycle, "Validate",
			"cohort parents form a cycle (%s): its ClusterQueues admit nothing until it is broken", describeCycle(ancestry.Cycle))
	}
	return ctrl.Result{}, nil
}

// SetupWithManager watches Cohorts.
func (r *CohortReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).For(&kueue.Cohort{}).Named("cohort").Complete(r)
}
