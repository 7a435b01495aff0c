package apply

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/cache"
	"github.com/sluicehq/sluice/internal/quota"
)

// QueueStatusWriter keeps the counts and usage in ClusterQueue and
// LocalQueue status current. It writes on a period rather than per
// admission, and only what changed; a queue that keeps changing is written
// at most once per MinInterval, except that a queue that drained (nothing
// pending or reserving) is written at once, so its status never says it is
// busy once it is idle. MaxWritesPerPeriod bounds the total:
// with a thousand busy queues, status writes would otherwise outnumber the
// admissions; the queues written longest ago go first.
type QueueStatusWriter struct {
	Client             client.Client
	Tracker            *Tracker
	Dispatcher         *Dispatcher
	Period             time.Duration
	MinInterval        time.Duration
	MaxWritesPerPeriod int
	Clock              clock.WithTicker

	lastWritten map[string]time.Time
}

// statusUpdate is a queue whose status changed, ready to be written.
type statusUpdate struct {
	key string
	// drained: the new status says nothing is pending or reserving.
	drained bool
	write   func()
}

// NeedLeaderElection: the leader's view is the one to publish.
func (w *QueueStatusWriter) NeedLeaderElection() bool { return true }

// Start writes until ctx ends.
func (w *QueueStatusWriter) Start(ctx context.Context) error {
	ticker := w.Clock.NewTicker(w.Period)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C():
			w.flush(ctx)
		}
	}
}

func (w *QueueStatusWriter) flush(ctx context.Context) {
	byCQ, byLQ := w.Tracker.Cache.Usages()
	lqToCQ := w.Tracker.Cache.LocalQueueKeys()
	pendingByLQ := map[string]int32{}
	pendingByCQ := map[string]int32{}
	for _, info := range w.Tracker.Queues.All() {
		key := info.Namespace + "/" + info.LocalQueue
		pendingByLQ[key]++
		if cq, ok := lqToCQ[key]; ok {
			pendingByCQ[cq]++
		}
	}
	cqShares, cohortShares := w.Tracker.Cache.WeightedShares()
	reserved := func(u *cache.Usage) quota.Amounts { return u.Reserved }
	admitted := func(u *cache.Usage) quota.Amounts { return u.Admitted }
	var updates []statusUpdate
	for _, name := range w.Tracker.Cache.ClusterQueueNames() {
		usage := byCQ[name]
		updates = appendIfChanged(ctx, w, updates, &kueue.ClusterQueue{}, client.ObjectKey{Name: name}, func(cq *kueue.ClusterQueue) bool {
			desired := cq.Status.DeepCopy()
			desired.PendingWorkloads = pendingByCQ[name]
			desired.ReservingWorkloads, desired.AdmittedWorkloads = counts(usage)
			desired.FlavorsReservation = flavorUsage(cq, usage, reserved)
			desired.FlavorsUsage = flavorUsage(cq, usage, admitted)
			desired.FairSharing = fairSharingStatus(cqShares, name)
			changed := !equality.Semantic.DeepEqual(&cq.Status, desired)
			cq.Status = *desired
			return changed
		}, func(cq *kueue.ClusterQueue) bool {
			return cq.Status.PendingWorkloads == 0 && cq.Status.ReservingWorkloads == 0
		})
	}
	for key, cqName := range lqToCQ {
		ns, name := splitKey(key)
		cq, _ := w.Tracker.Cache.ClusterQueue(cqName)
		usage := byLQ[key]
		updates = appendIfChanged(ctx, w, updates, &kueue.LocalQueue{}, client.ObjectKey{Namespace: ns, Name: name}, func(lq *kueue.LocalQueue) bool {
			desired := lq.Status.DeepCopy()
			desired.PendingWorkloads = pendingByLQ[key]
			desired.ReservingWorkloads, desired.AdmittedWorkloads = counts(usage)
			desired.FlavorsReservation = localFlavorUsage(cq, usage, reserved)
			desired.FlavorsUsage = localFlavorUsage(cq, usage, admitted)
			changed := !equality.Semantic.DeepEqual(&lq.Status, desired)
			lq.Status = *desired
			return changed
		}, func(lq *kueue.LocalQueue) bool {
			return lq.Status.PendingWorkloads == 0 && lq.Status.ReservingWorkloads == 0
		})
	}
	for _, name := range w.Tracker.Cache.CohortNames() {
		updates = appendIfChanged(ctx, w, updates, &kueue.Cohort{}, client.ObjectKey{Name: name}, func(co *kueue.Cohort) bool {
			desired := fairSharingStatus(cohortShares, name)
			changed := !equality.Semantic.DeepEqual(co.Status.FairSharing, desired)
			co.Status.FairSharing = desired
			return changed
		}, func(*kueue.Cohort) bool { return false })
	}
	w.writeStalestFirst(updates)
}

// fairSharingStatus is a node's reported share; nil when fair sharing is
// off (shares is nil), so that turning it off clears the field.
func fairSharingStatus(shares map[string]int64, name string) *kueue.FairSharingStatus {
	if shares == nil {
		return nil
	}
	return &kueue.FairSharingStatus{WeightedShare: shares[name]}
}

// writeStalestFirst writes the updates of the queues written longest ago,
// up to the budget; the others, and those written within MinInterval that
// did not drain, wait for a later period.
func (w *QueueStatusWriter) writeStalestFirst(updates []statusUpdate) {
	if w.lastWritten == nil {
		w.lastWritten = map[string]time.Time{}
	}
	now := w.Clock.Now()
	updates = slices.DeleteFunc(updates, func(u statusUpdate) bool {
		return !u.drained && now.Sub(w.lastWritten[u.key]) < w.MinInterval
	})
	sort.SliceStable(updates, func(i, j int) bool {
		return w.lastWritten[updates[i].key].Before(w.lastWritten[updates[j].key])
	})
	if w.MaxWritesPerPeriod > 0 && len(updates) > w.MaxWritesPerPeriod {
		updates = updates[:w.MaxWritesPerPeriod]
	}
	for _, u := range updates {
		u.write()
		w.lastWritten[u.key] = now
	}
}

// appendIfChanged reads a queue from the cache and lets update set its
// status; when update reports a change, it appends the write of it, which
// goes through the dispatcher as a background write (a newer status of the
// queue replaces one still queued).
func appendIfChanged[T client.Object](ctx context.Context, w *QueueStatusWriter, updates []statusUpdate, obj T, key client.ObjectKey, update func(T) bool, drained func(T) bool) []statusUpdate {
	if err := w.Client.Get(ctx, key, obj); err != nil {
		return updates
	}
	patch := withCounts{client.MergeFrom(obj.DeepCopyObject().(client.Object))}
	if !update(obj) {
		return updates
	}
	name := fmt.Sprintf("%T/%s", obj, key)
	return append(updates, statusUpdate{key: name, drained: drained(obj), write: func() {
		w.Dispatcher.Add(Write{Object: name, Kind: writeQueue, Class: Background, Run: func(ctx context.Context) Outcome {
			err := w.Client.Status().Patch(ctx, obj, patch)
			countWrite(writeQueue, err)
			if err != nil {
				ctrl.LoggerFrom(ctx).V(2).Info("writing queue status", "queue", key.String(), "error", err.Error())
			}
			// Not retried: the next period computes it afresh.
			return Done
		}})
	}})
}

func counts(u *cache.Usage) (reserving, admitted int32) {
	if u == nil {
		return 0, 0
	}
	return u.ReservingWorkloads, u.AdmittedWorkloads
}

// flavorUsage lists, for every flavor and resource of the queue, what is
// used and what of it is borrowed (beyond the nominal quota).
func flavorUsage(cq *kueue.ClusterQueue, u *cache.Usage, pick func(*cache.Usage) quota.Amounts) []kueue.FlavorUsage {
	var used quota.Amounts
	if u != nil {
		used = pick(u)
	}
	var out []kueue.FlavorUsage
	for _, rg := range cq.Spec.ResourceGroups {
		for _, f := range rg.Flavors {
			fu := kueue.FlavorUsage{Name: f.Name}
			for _, r := range f.Resources {
				v := used[quota.FlavorResource{Flavor: string(f.Name), Resource: r.Name}]
				borrowed := max(0, v-quota.ToAmount(r.Name, r.NominalQuota))
				fu.Resources = append(fu.Resources, kueue.ResourceUsage{
					Name: string(r.Name), Total: quota.ToQuantity(r.Name, v), Borrowed: quota.ToQuantity(r.Name, borrowed)})
			}
			out = append(out, fu)
		}
	}
	return out
}

func localFlavorUsage(cq *kueue.ClusterQueue, u *cache.Usage, pick func(*cache.Usage) quota.Amounts) []kueue.LocalQueueFlavorUsage {
	if cq == nil {
		return nil
	}
	var out []kueue.LocalQueueFlavorUsage
	for _, fu := range flavorUsage(cq, u, pick) {
		lfu := kueue.LocalQueueFlavorUsage{Name: fu.Name}
		for _, r := range fu.Resources {
			lfu.Resources = append(lfu.Resources, kueue.LocalQueueResourceUsage{Name: corev1.ResourceName(r.Name), Total: r.Total})
		}
		out = append(out, lfu)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func splitKey(key string) (string, string) {
	for i := range len(key) {
		if key[i] == '/' {
			return key[:i], key[i+1:]
		}
	}
	return "", key
}
