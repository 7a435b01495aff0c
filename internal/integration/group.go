package integration

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/workload"
)

// GroupShape makes a kind's jobs groups of member objects that share one
// Workload (a pod group): no single object is the job, so the Workload
// belongs to the group's name, owned by none of the members, and lives as
// long as the group has members.
type GroupShape struct {
	// GroupOf names the group a member object belongs to ("" for none).
	GroupOf func(client.Object) string
	// Load reads the members of a group; a nil Group: it has none left.
	// wl is the group's Workload, or nil: a group reports its size against
	// it.
	Load func(ctx context.Context, reader client.Reader, key types.NamespacedName, wl *kueue.Workload) (Group, error)
	// Owns tells whether a Workload of a group's name is the one made for
	// the group (and not one that happens to share the name).
	Owns func(wl *kueue.Workload, group string) bool
}

// Group is a Job made of several member objects (the Pods of a pod group).
// Job's methods speak for the whole group: IsSuspended when no member
// runs, Active while one may, Run starts the members the admission has
// places for. The reconciler writes, stops and releases each member.
type Group interface {
	Job
	// Members are every member object, those being deleted included.
	Members() []client.Object
	// Changed are the members Run changed in memory, to be written.
	Changed() []client.Object
	// Running are the members that may run and are not being deleted:
	// stopping the group deletes them.
	Running() []client.Object
	// Waiting tells whether members wait to start while others run
	// (replacements of ended members).
	Waiting() bool
	// Complete tells whether the group may get its Workload: all its
	// members exist, or it asked to be admitted before they do.
	Complete() bool
	// GroupName names the group, and its Workload.
	GroupName() string
	// WorkloadLabels are the labels that tie the group's Workload to it.
	WorkloadLabels() map[string]string
	// LetGo are the members whose finalizer may go although the group
	// lives on: members being deleted, and members that ended and that
	// replacements take the place of.
	LetGo() []client.Object
}

// reconcileGroup finds a group's members and its Workload (named after the
// group) and drives them through the same lifecycle as a single job.
func (r *Reconciler) reconcileGroup(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	wl := &kueue.Workload{}
	if err := r.Client.Get(ctx, req.NamespacedName, wl); apierrors.IsNotFound(err) {
		wl = nil
	} else if err != nil {
		return ctrl.Result{}, fmt.Errorf("reading the Workload of group %s: %w", req, err)
	}
	g, err := r.Kind.Group.Load(ctx, r.Client, req.NamespacedName, wl)
	if err != nil {
		return ctrl.Result{}, err
	}
	if wl != nil && !r.Kind.Group.Owns(wl, req.Name) {
		// A Workload of the group's name that sluice didn't make for it (a
		// Job's, a bare one): never evict, resize, finish or delete it.
		// The webhooks refuse such members; ones from before wait.
		ctrl.LoggerFrom(ctx).Info("group name taken by a Workload that is not the group's; its members wait", "workload", wl.Name)
		return ctrl.Result{}, nil
	}
	if g == nil {
		// The group is gone, and with it what its Workload held.
		if wl == nil {
			return ctrl.Result{}, nil
		}
		if err := r.Client.Delete(ctx, wl, client.Preconditions{UID: &wl.UID}); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("deleting the Workload of group %s: %w", req, err)
		}
		return ctrl.Result{}, ReleaseWorkload(ctx, r.Client, wl)
	}
	for _, member := range g.LetGo() {
		if err := r.releaseObject(ctx, member); err != nil {
			return ctrl.Result{}, err
		}
	}
	decision, err := r.decide(ctx, g.Object())
	if err != nil || !decision.Managed {
		return ctrl.Result{}, err
	}
	if wl == nil {
		if !g.Complete() {
			return ctrl.Result{}, nil
		}
		return r.createWorkload(ctx, g, decision.QueueName)
	}
	if !workload.HasQuotaReservation(wl) && !workload.IsFinished(wl) && wl.DeletionTimestamp.IsZero() && g.IsSuspended() {
		if err := r.syncPendingWorkload(ctx, g, wl, decision.QueueName); err != nil {
			return ctrl.Result{}, err
		}
	}
	return r.drive(ctx, g, wl, decision.QueueName)
}

// write stores what Run or Restore changed: the job's object, or each
// changed member of a group. It tells whether anything was written.
func (r *Reconciler) write(ctx context.Context, job Job) (bool, error) {
	objects := []client.Object{job.Object()}
	if g, ok := job.(Group); ok {
		objects = g.Changed()
	}
	for _, obj := range objects {
		if err := r.Client.Update(ctx, obj); err != nil {
			return false, fmt.Errorf("updating %s: %w", client.ObjectKeyFromObject(obj), err)
		}
	}
	return len(objects) > 0, nil
}

// stopMembers stops a group: it deletes its running members (a member
// can't be suspended once it runs) and tells whether none may run any
// more.
func (r *Reconciler) stopMembers(ctx context.Context, g Group, why string) (bool, error) {
	for _, member := range g.Running() {
		if err := r.Client.Delete(ctx, member, client.Preconditions{UID: ptr.To(member.GetUID())}); client.IgnoreNotFound(err) != nil {
			return false, fmt.Errorf("deleting %s to stop its group: %w", client.ObjectKeyFromObject(member), err)
		}
		r.Recorder.Eventf(member, nil, corev1.EventTypeNormal, EventStopped, "Delete", "sluice deleted it: %s", why)
	}
	return !g.Active(), nil
}

// workloadName is the name of a job's Workload: its group's, or one
// derived from the job's kind, name and UID.
func workloadName(kind Kind, job Job) string {
	if g, ok := job.(Group); ok {
		return g.GroupName()
	}
	obj := job.Object()
	return WorkloadName(kind.GVK, obj.GetName(), obj.GetUID())
}

// setupGroupWithManager watches the members, mapped to their group, and
// the Workloads labelled with a group.
func (r *Reconciler) setupGroupWithManager(mgr ctrl.Manager) error {
	toGroup := func(_ context.Context, o client.Object) []reconcile.Request {
		name := r.Kind.Group.GroupOf(o)
		if name == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: name}}}
	}
	toWorkloadGroup := func(_ context.Context, o client.Object) []reconcile.Request {
		name := o.GetLabels()[kueue.PodGroupNameLabel]
		if name == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: name}}}
	}
	isMember := predicate.NewPredicateFuncs(func(o client.Object) bool { return r.Kind.Group.GroupOf(o) != "" })
	return ctrl.NewControllerManagedBy(mgr).
		Named(r.Kind.Framework+"-group").
		Watches(r.Kind.NewObject(), handler.EnqueueRequestsFromMapFunc(toGroup), builder.WithPredicates(isMember)).
		Watches(&kueue.Workload{}, handler.EnqueueRequestsFromMapFunc(toWorkloadGroup)).
		Complete(r)
}
