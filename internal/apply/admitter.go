package apply

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/metrics"
	"github.com/sluicehq/sluice/internal/scheduler"
	"github.com/sluicehq/sluice/internal/workload"
)

// Admitter runs admission cycles while this manager is the leader: it
// takes a snapshot, lets internal/scheduler decide, and hands the decisions
// to the write path. An admission is charged ("assumed") as soon as it is
// decided, so the next cycle does not wait for the write.
type Admitter struct {
	// Metrics counts the admission cycles; nil counts nothing.
	Metrics    *metrics.Recorder
	Client     client.Client
	Tracker    *Tracker
	Workloads  *Workloads
	Verdicts   *Verdicts
	Dispatcher *Dispatcher
	Clock      Clock
	// PreemptionGrace holds a preemption back until a cycle at least that
	// much later decides it again (see preemptionConfirmer); 0 preempts at
	// once.
	PreemptionGrace time.Duration
	preemptions     preemptionConfirmer
	// DrainTimeout bounds how long queued urgent writes may take once the
	// manager stops.
	DrainTimeout time.Duration
	// BlockAdmission is waitForPodsReady.blockAdmission: while an admitted
	// workload's pods are not ready, nothing more is admitted, and one
	// admission at a time.
	BlockAdmission bool
	// CyclePause is the least time from one cycle's start to the next:
	// events that come meanwhile (admissions landing, quota freed) are
	// decided together instead of a snapshot each. 0 runs a cycle per wake.
	CyclePause time.Duration
}

// NeedLeaderElection: only the leader admits.
func (a *Admitter) NeedLeaderElection() bool { return true }

// Start rebuilds the state from the informer cache, starts the write path,
// then runs cycles until ctx ends; it returns once the urgent writes queued
// are made (or DrainTimeout passed), so that a new leader sees them.
func (a *Admitter) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("admitter")
	if err := a.rebuild(ctx); err != nil {
		return err
	}
	// Writes in flight finish even as the manager stops, within a bound.
	writeCtx, cancelWrites := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWrites()
	a.Dispatcher.Start(writeCtx)
	defer a.Dispatcher.Stop(cancelWrites, a.DrainTimeout)
	log.Info("admitting")
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-a.Tracker.Queues.Wake():
		}
		started := a.Clock.Now()
		a.cycle(ctx)
		if rest := a.CyclePause - a.Clock.Since(started); rest > 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-a.Clock.After(rest):
			}
		}
	}
}

// rebuild makes sure that every reservation recorded in the API is charged
// before the first cycle: after a restart or a leader change nothing may be
// admitted beyond quota. (A write of the old leader still on its way lands
// before this list: see docs/reliability.md, the lease fence.) It also primes the queues and queue definitions so
// the first cycle doesn't wait for each reconciler.
func (a *Admitter) rebuild(ctx context.Context) error {
	cqs := &kueue.ClusterQueueList{}
	if err := a.Client.List(ctx, cqs); err != nil {
		return fmt.Errorf("listing ClusterQueues: %w", err)
	}
	for i := range cqs.Items {
		cq := &cqs.Items[i]
		if _, known := a.Tracker.Cache.ClusterQueue(cq.Name); !known {
			active := meta.FindStatusCondition(cq.Status.Conditions, kueue.ConditionActive)
			if active == nil {
				active = &metav1.Condition{Status: metav1.ConditionFalse, Message: "not evaluated yet"}
			}
			a.Tracker.Cache.SetClusterQueue(cq, active.Status == metav1.ConditionTrue, active.Message)
		}
	}
	for _, list := range []client.ObjectList{&kueue.LocalQueueList{}, &kueue.CohortList{}, &kueue.ResourceFlavorList{}, &corev1.NamespaceList{}} {
		if err := a.Client.List(ctx, list); err != nil {
			return fmt.Errorf("listing %T: %w", list, err)
		}
		_ = meta.EachListItem(list, func(obj runtime.Object) error {
			switch o := obj.(type) {
			case *kueue.LocalQueue:
				a.Tracker.Cache.SetLocalQueue(o)
			case *kueue.Cohort:
				a.Tracker.Cache.SetCohort(o)
			case *kueue.ResourceFlavor:
				a.Tracker.Cache.SetFlavor(o)
			case *corev1.Namespace:
				a.Tracker.Cache.SetNamespace(o.Name, o.Labels)
			}
			return nil
		})
	}
	// The Workloads come from the API server, not the informer: the
	// informer of a manager that just became the leader may lag, and an
	// admission the old leader wrote just before it stopped would be
	// missing from it, its room admitted twice until the watch showed it.
	// Versions the informer delivers late are older than the list's and
	// the Tracker does not apply them over it.
	wls := &kueue.WorkloadList{}
	if err := a.Workloads.APIReader.List(ctx, wls); err != nil {
		return fmt.Errorf("listing Workloads: %w", err)
	}
	for i := range wls.Items {
		wl := &wls.Items[i]
		switch {
		case !wl.DeletionTimestamp.IsZero() || workload.IsFinished(wl):
		case workload.HasQuotaReservation(wl), workload.IsActive(wl) && !a.Tracker.Cache.Holds(workload.Key(wl)):
			a.Tracker.Observe(wl)
		}
	}
	return nil
}

// cycle decides and hands the writes to the write path.
func (a *Admitter) cycle(ctx context.Context) {
	started := a.Clock.Now()
	// Before the snapshot: a requeue after it voids its park verdicts.
	requeues := a.Tracker.Queues.Requeues()
	snap := a.Tracker.Cache.Snapshot()
	pending := a.Tracker.Queues.Pending()
	if len(pending) == 0 {
		return
	}
	decisions := scheduler.Schedule(snap, pending)
	took := a.Clock.Since(started)
	observeCycle(took)
	a.Metrics.AdmissionAttempt(slices.ContainsFunc(decisions, func(d scheduler.Decision) bool { return d.Admitted() }), took)
	now := a.Clock.Now()
	// waiting counts each ClusterQueue's workloads that wait for room so
	// far: the decisions of a queue come in its order.
	waiting := map[string]int{}
	blockedBy, blocked := "", false
	if a.BlockAdmission {
		blockedBy, blocked = a.Tracker.AdmissionBlocked()
	}
	for i := range decisions {
		d := decisions[i]
		if d.Admitted() && blocked {
			d = waitForPodsReady(d, blockedBy)
		}
		if d.Admitted() {
			if a.BlockAdmission {
				blockedBy, blocked = d.Info.Key, true
			}
			a.preemptions.forget(d.Info.Key)
			id := a.Tracker.Assume(d.Info, d.ClusterQueue, d.Usage, now)
			admittedWorkloads.Inc()
			a.Verdicts.Forget(d.Info.Key)
			a.Workloads.Admit(d, id)
			a.Tracker.Queues.RequeueNext(d.ClusterQueue, d.Info.Shape)
			continue
		}
		a.preempt(d, now)
		a.Verdicts.Offer(d, waiting[d.ClusterQueue])
		if WaitsForRoom(d.Reason) {
			waiting[d.ClusterQueue]++
		}
		if d.Park {
			a.Tracker.Queues.Park(d.Info, d.ClusterQueue, requeues)
		}
	}
	a.preemptions.prune(now, a.PreemptionGrace)
	a.Verdicts.Trim(len(pending))
	ctrl.LoggerFrom(ctx).V(3).Info("cycle", "pending", len(pending), "decisions", len(decisions))
}

// preempt makes the preemptions a decision asks for once they are
// confirmed, or asks for a cycle when they may be.
func (a *Admitter) preempt(d scheduler.Decision, now time.Time) {
	if len(d.Victims) == 0 {
		a.preemptions.forget(d.Info.Key)
		return
	}
	confirmed, first := a.preemptions.confirmed(d.Info.Key, now, a.PreemptionGrace)
	if first {
		a.Clock.AfterFunc(a.PreemptionGrace, a.Tracker.Queues.Signal)
	}
	if !confirmed {
		return
	}
	for _, v := range d.Victims {
		a.Workloads.Preempt(v, d)
	}
}

// ReasonWaitingForPodsReady is the QuotaReserved=False reason of a workload
// that fits but waits because waitForPodsReady.blockAdmission holds
// admission until an admitted workload's pods are ready (Kueue's).
const ReasonWaitingForPodsReady = "WaitingForPodsReady"

// waitForPodsReady turns an admission that blockAdmission holds back into
// a verdict naming the workload it waits for. It stays pending, not
// parked: the admitter is woken when the pods are ready.
func waitForPodsReady(d scheduler.Decision, blockedBy string) scheduler.Decision {
	return scheduler.Decision{Info: d.Info, ClusterQueue: d.ClusterQueue, Reason: ReasonWaitingForPodsReady,
		Message: fmt.Sprintf("The workload fits in ClusterQueue %s, but admission waits for the pods of workload %s to be ready (waitForPodsReady.blockAdmission)",
			d.ClusterQueue, blockedBy)}
}
