package integration

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/workload"
)

// keepSuspended keeps a queued job whose Workload is not admitted
// suspended, in the update itself, whoever would have it run: sluice
// unsuspends a queued job only on admission, and anyone else doing it (its
// owner by hand, a controller rewriting its spec, as KubeRay rewrites a
// RayService's cluster) would have its controller create pods before the
// reconciler could stop them. That holds too for a running job this very
// update makes sluice's to queue: one its parent no longer makes once
// grown (a JobSet's Job given more pods), which its parent's Workload
// does not count.
func (w *JobWebhook[T]) keepSuspended(ctx context.Context, obj T) error {
	job := w.Kind.Wrap(obj)
	if done, _, _ := job.Finished(); done || job.IsSuspended() || job.ManagedElsewhere() != "" {
		return nil
	}
	placement, err := w.Policy.Decide(ctx, w.Reader, obj)
	if err != nil || !placement.Managed {
		return err
	}
	admitted, err := jobAdmitted(ctx, w.Kind, obj, w.Reader, w.APIReader)
	if err != nil || admitted {
		return err
	}
	job.Suspend()
	return nil
}

// jobAdmitted tells whether a Workload of the job (its own, or the
// prebuilt one it names) holds an admission it is not losing. The manager's cache may lag
// behind the admission sluice just wrote (or another replica's), so a "no"
// from cache is read again from api.
func jobAdmitted(ctx context.Context, kind Kind, obj client.Object, cache, api client.Reader) (bool, error) {
	wl, err := admittedWorkload(ctx, kind, obj, cache, api)
	return wl != nil, err
}

// admittedWorkload is the Workload of jobAdmitted, or nil.
func admittedWorkload(ctx context.Context, kind Kind, obj client.Object, cache, api client.Reader) (*kueue.Workload, error) {
	for i, reader := range []client.Reader{cache, api} {
		wls, err := jobWorkloads(ctx, kind, obj, reader, i == 0)
		if err != nil {
			return nil, err
		}
		for j := range wls {
			wl := &wls[j]
			if workload.HasQuotaReservation(wl) && workload.IsAdmitted(wl) && !workload.IsEvicting(wl) && !workload.IsFinished(wl) {
				return wl, nil
			}
		}
	}
	return nil, nil
}

// jobWorkloads are the Workloads a job controls, or the prebuilt one it
// names once it controls that one (naming another job's admitted Workload
// admits nothing).
func jobWorkloads(ctx context.Context, kind Kind, obj client.Object, reader client.Reader, indexed bool) ([]kueue.Workload, error) {
	if name := prebuiltName(obj); name != "" {
		wl := kueue.Workload{}
		if err := reader.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: name}, &wl); err != nil {
			return nil, client.IgnoreNotFound(err)
		}
		if owner := metav1.GetControllerOf(&wl); owner == nil || owner.UID != obj.GetUID() {
			return nil, nil
		}
		return []kueue.Workload{wl}, nil
	}
	return controlledWorkloads(ctx, reader, kind, obj, indexed)
}
