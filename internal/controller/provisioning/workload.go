package provisioning

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	autoscaling "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
	"github.com/sluicehq/sluice/internal/patch"
	"github.com/sluicehq/sluice/internal/workload"
)

// WorkloadReconciler runs the provisioning checks of reserved workloads: a
// ProvisioningRequest per check and attempt while the reservation lasts,
// its conditions turned into the check's state. Requests outlive nothing:
// once the workload holds no reservation (evicted, finished, deleted) its
// requests and their templates go, so capacity is never booked for a
// workload that no longer waits for it.
type WorkloadReconciler struct {
	Client client.Client
	// Workloads writes the checks' states, in order with sluice's
	// admission writes of each Workload.
	Workloads integration.WorkloadStatusWriter
	Clock     clock.Clock
}

// +kubebuilder:rbac:groups=autoscaling.x-k8s.io,resources=provisioningrequests,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=podtemplates,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads/status,verbs=get;update;patch

func (r *WorkloadReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	wl := &kueue.Workload{}
	if err := r.Client.Get(ctx, req.NamespacedName, wl); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	checks, err := r.ourChecks(ctx, wl)
	if err != nil || len(checks) == 0 {
		return ctrl.Result{}, err
	}
	if !workload.HasQuotaReservation(wl) || workload.IsFinished(wl) || !wl.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.deleteRequests(ctx, wl, nil)
	}
	keep := map[string]bool{}
	updated := slices.Clone(wl.Status.AdmissionChecks)
	changed := false
	for i := range updated {
		ac, ok := checks[updated[i].Name]
		if !ok {
			continue
		}
		c, err := r.syncCheck(ctx, wl, ac, updated[i], keep)
		if err != nil {
			return ctrl.Result{}, err
		}
		if !equalState(c, updated[i]) {
			if c.State != updated[i].State {
				c.LastTransitionTime = metav1.NewTime(r.Clock.Now())
			}
			updated[i], changed = c, true
		}
	}
	if err := r.deleteRequests(ctx, wl, keep); err != nil {
		return ctrl.Result{}, err
	}
	if !changed {
		return ctrl.Result{}, nil
	}
	if _, err := r.Workloads.Status(ctx, wl, "provisioning-checks", patch.Always(func() { wl.Status.AdmissionChecks = updated })); err != nil {
		return ctrl.Result{}, fmt.Errorf("updating the provisioning checks of Workload %s: %w", wl.Name, err)
	}
	return ctrl.Result{}, nil
}

// ourChecks are the AdmissionChecks of this controller the workload has.
func (r *WorkloadReconciler) ourChecks(ctx context.Context, wl *kueue.Workload) (map[string]*kueue.AdmissionCheck, error) {
	out := map[string]*kueue.AdmissionCheck{}
	for _, s := range wl.Status.AdmissionChecks {
		ac := &kueue.AdmissionCheck{}
		if err := r.Client.Get(ctx, client.ObjectKey{Name: s.Name}, ac); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("reading AdmissionCheck %s: %w", s.Name, err)
		}
		if ac.Spec.ControllerName == kueue.ProvisioningRequestControllerName {
			out[s.Name] = ac
		}
	}
	return out, nil
}

// syncCheck makes one check's request exist and returns the check's state
// as the request's conditions make it. It adds the request it keeps to
// keep.
func (r *WorkloadReconciler) syncCheck(ctx context.Context, wl *kueue.Workload, ac *kueue.AdmissionCheck, state kueue.AdmissionCheckState,
	keep map[string]bool) (kueue.AdmissionCheckState, error) {
	if state.State == kueue.CheckStateRetry || state.State == kueue.CheckStateRejected {
		// Decided: the workload reconciler evicts or deactivates.
		return state, nil
	}
	prc, err := config(ctx, r.Client, ac)
	if apierrors.IsNotFound(err) {
		state.Message = fmt.Sprintf("ProvisioningRequestConfig of AdmissionCheck %s not found", ac.Name)
		return state, nil
	} else if err != nil {
		return state, fmt.Errorf("reading the ProvisioningRequestConfig of AdmissionCheck %s: %w", ac.Name, err)
	}
	podSets := provisionedPodSets(wl, prc.Spec.ManagedResources)
	if len(podSets) == 0 {
		state.State, state.Message = kueue.CheckStateReady, "No pod set requests a managed resource: nothing to provision"
		return state, nil
	}
	flavors, err := r.flavors(ctx, wl)
	if err != nil {
		return state, err
	}
	requested := requestedPodSets(wl, podSets, flavors, prc.Spec.PodSetMergePolicy)
	name := requestName(wl.Name, ac.Name, attempt(&state))
	keep[name] = true
	pr := &autoscaling.ProvisioningRequest{}
	err = r.Client.Get(ctx, client.ObjectKey{Namespace: wl.Namespace, Name: name}, pr)
	switch {
	case apierrors.IsNotFound(err):
		if state.State == kueue.CheckStateReady {
			return state, nil // provisioned before a restart; nothing left to book
		}
		if err := r.createRequest(ctx, wl, prc, name, requested); err != nil {
			return state, err
		}
		state.State, state.Message = kueue.CheckStatePending, fmt.Sprintf("Created ProvisioningRequest %s", name)
		return state, nil
	case err != nil:
		return state, fmt.Errorf("reading ProvisioningRequest %s: %w", name, err)
	}
	if owner := metav1.GetControllerOf(pr); owner == nil || owner.UID != wl.UID {
		// Someone created a request under this name first: its status
		// says nothing about this Workload's capacity, so it is neither
		// trusted nor deleted, and the check waits.
		state.State = kueue.CheckStatePending
		state.Message = fmt.Sprintf("ProvisioningRequest %s exists but is not controlled by Workload %s; it is not used", name, wl.Name)
		return state, nil
	}
	next, message, wait := nextState(pr, &state, workload.IsAdmitted(wl), retryOf(prc))
	if state.State == kueue.CheckStateReady && (next == kueue.CheckStateReady || next == kueue.CheckStatePending) {
		// Provisioned: only a booking that expires before the start, or
		// capacity revoked after it, changes that.
		return state, nil
	}
	state.State, state.Message, state.RequeueAfterSeconds = next, message, wait
	state.PodSetUpdates = nil
	if next == kueue.CheckStateReady {
		state.PodSetUpdates = podSetUpdates(pr, requested, prc)
	}
	return state, nil
}

// flavors reads the ResourceFlavors of a workload's admission.
func (r *WorkloadReconciler) flavors(ctx context.Context, wl *kueue.Workload) (map[kueue.ResourceFlavorReference]*kueue.ResourceFlavor, error) {
	out := map[kueue.ResourceFlavorReference]*kueue.ResourceFlavor{}
	for _, psa := range wl.Status.Admission.PodSetAssignments {
		for _, ref := range psa.Flavors {
			if _, ok := out[ref]; ok {
				continue
			}
			rf := &kueue.ResourceFlavor{}
			if err := r.Client.Get(ctx, client.ObjectKey{Name: string(ref)}, rf); err != nil {
				if apierrors.IsNotFound(err) {
					continue
				}
				return nil, fmt.Errorf("reading ResourceFlavor %s: %w", ref, err)
			}
			out[ref] = rf
		}
	}
	return out, nil
}

// createRequest creates the request's PodTemplates, then the request,
// all controlled by the Workload (so they go with it).
func (r *WorkloadReconciler) createRequest(ctx context.Context, wl *kueue.Workload, prc *kueue.ProvisioningRequestConfig, name string, requested []requestedPodSet) error {
	pr := &autoscaling.ProvisioningRequest{ObjectMeta: metav1.ObjectMeta{Namespace: wl.Namespace, Name: name},
		Spec: autoscaling.ProvisioningRequestSpec{ProvisioningClassName: prc.Spec.ProvisioningClassName, Parameters: map[string]autoscaling.Parameter{}}}
	for _, k := range slices.Sorted(maps.Keys(prc.Spec.Parameters)) {
		pr.Spec.Parameters[k] = autoscaling.Parameter(prc.Spec.Parameters[k])
	}
	for _, rp := range requested {
		tmpl := &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: wl.Namespace, Name: templateName(name, rp.name)}, Template: rp.template}
		if err := r.createOwned(ctx, wl, tmpl); err != nil {
			return err
		}
		pr.Spec.PodSets = append(pr.Spec.PodSets, autoscaling.PodSet{PodTemplateRef: autoscaling.Reference{Name: tmpl.Name}, Count: rp.count})
	}
	return r.createOwned(ctx, wl, pr)
}

func (r *WorkloadReconciler) createOwned(ctx context.Context, wl *kueue.Workload, obj client.Object) error {
	if err := controllerutil.SetControllerReference(wl, obj, r.Client.Scheme()); err != nil {
		return fmt.Errorf("owning %s by Workload %s: %w", obj.GetName(), wl.Name, err)
	}
	if err := r.Client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
	}
	return nil
}

// deleteRequests deletes the workload's requests not in keep (all of them
// when keep is nil), and their templates.
func (r *WorkloadReconciler) deleteRequests(ctx context.Context, wl *kueue.Workload, keep map[string]bool) error {
	list := &autoscaling.ProvisioningRequestList{}
	if err := r.Client.List(ctx, list, client.InNamespace(wl.Namespace)); err != nil {
		return fmt.Errorf("listing the ProvisioningRequests of %s: %w", wl.Namespace, err)
	}
	for i := range list.Items {
		pr := &list.Items[i]
		if owner := metav1.GetControllerOf(pr); owner == nil || owner.UID != wl.UID || keep[pr.Name] {
			continue
		}
		for _, ps := range pr.Spec.PodSets {
			tmpl := &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: pr.Namespace, Name: ps.PodTemplateRef.Name}}
			if err := r.Client.Delete(ctx, tmpl); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("deleting PodTemplate %s: %w", tmpl.Name, err)
			}
		}
		if err := r.Client.Delete(ctx, pr); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting ProvisioningRequest %s: %w", pr.Name, err)
		}
	}
	return nil
}

// equalState tells whether two states of a check say the same, whenever
// they changed.
func equalState(a, b kueue.AdmissionCheckState) bool {
	a.LastTransitionTime, b.LastTransitionTime = metav1.Time{}, metav1.Time{}
	return equality.Semantic.DeepEqual(a, b)
}

// SetupWithManager watches Workloads and the requests they control. Only
// for a cluster that serves ProvisioningRequests.
func (r *WorkloadReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Workloads == nil {
		return errors.New("the provisioning workload reconciler has no Workload status writer")
	}
	// Only workloads with admission checks can have one of ours: the rest
	// (most of them, on the admission hot path) are not queued here.
	withChecks := predicate.NewPredicateFuncs(func(o client.Object) bool {
		wl, ok := o.(*kueue.Workload)
		return ok && len(wl.Status.AdmissionChecks) > 0
	})
	return ctrl.NewControllerManagedBy(mgr).
		For(&kueue.Workload{}, builder.WithPredicates(withChecks)).
		Owns(&autoscaling.ProvisioningRequest{}).
		Named("provisioning-workload").
		Complete(r)
}
