package multikueue

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// GarbageCollector deletes, every Interval, the objects this manager made
// in workers that no local Workload accounts for any more: their Workload
// was deleted while the worker was unreachable, or the manager was down.
// (The workload reconciler deletes them as soon as it can; this is for
// what it could not see.)
type GarbageCollector struct {
	Workloads *WorkloadReconciler
	Interval  time.Duration
}

// Start collects until ctx ends.
func (g *GarbageCollector) Start(ctx context.Context) error {
	if g.Interval <= 0 {
		return nil
	}
	wait.UntilWithContext(ctx, g.collect, g.Interval)
	return nil
}

// NeedLeaderElection: only the leader deletes.
func (g *GarbageCollector) NeedLeaderElection() bool { return true }

func (g *GarbageCollector) collect(ctx context.Context) {
	log := ctrl.LoggerFrom(ctx).WithName("multikueue-gc")
	r := g.Workloads
	for _, cluster := range r.Remotes.Names() {
		cached, _, ok := r.Remotes.Client(cluster)
		if !ok {
			continue
		}
		remotes := &kueue.WorkloadList{}
		if err := cached.List(ctx, remotes, client.MatchingLabels{kueue.MultiKueueOriginLabel: r.Origin}); err != nil {
			log.Error(err, "listing Workloads", "multiKueueCluster", cluster)
			continue
		}
		for i := range remotes.Items {
			remote := &remotes.Items[i]
			key := client.ObjectKeyFromObject(remote)
			local := &kueue.Workload{}
			err := r.Client.Get(ctx, key, local)
			if err != nil && !apierrors.IsNotFound(err) {
				log.Error(err, "reading Workload", "workload", key)
				continue
			}
			if err == nil && string(local.UID) == remote.Annotations[kueue.MultiKueueOriginUIDAnnotation] {
				continue
			}
			if err := r.deleteRemotes(ctx, key, []string{cluster}); err != nil {
				log.Error(err, "deleting an orphaned copy", "workload", key, "multiKueueCluster", cluster)
			}
		}
	}
}
