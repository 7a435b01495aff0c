package controller

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/scheduler"
	"github.com/sluicehq/sluice/internal/workload"
)

// Scheduler runs admission cycles while this manager is the leader: it
// takes a snapshot, lets internal/scheduler decide, and applies the
// decisions with at most one write each. An admission is charged to the
// cache ("assumed") as soon as it is decided, so the next cycle does not
// wait for the write; a failed write gives the quota back and queues the
// workload's latest version again.
type Scheduler struct {
	Client client.Client
	// APIReader reads a victim from the API server before it is evicted:
	// victims are often written by others just before (their job finished,
	// or was stopped), and the cache's version would be refused.
	APIReader client.Reader
	State     *State
	Clock     clock.Clock
	// Writers is how many status writes may be in flight at once; at most
	// a quarter of them write pending verdicts, admissions go first.
	Writers int
	// MessageRefresh is how often a pending workload's message may be
	// rewritten when only its numbers changed; a new reason is written at
	// once. Without it, every admission or release would rewrite the message
	// of every waiting workload of the cohort.
	MessageRefresh time.Duration
	// MessageRefreshesPerSecond bounds those refreshes in all, so that a
	// backlog of thousands of waiting workloads costs a trickle of writes;
	// 0 means no bound.
	MessageRefreshesPerSecond float64
	refreshBudget             *rate.Limiter

	// queued are the pending verdicts handed to the writers, by workload:
	// the same verdict is not sent twice, and a new message of the same
	// reason waits for MessageRefresh.
	queuedMu sync.Mutex
	queued   map[string]queuedVerdict
	// refreshDue are parked workloads whose message waits for the refresh
	// interval; the timer requeues them.
	refreshMu    sync.Mutex
	refreshDue   map[string]bool
	refreshArmed bool
}

// NeedLeaderElection: only the leader admits.
func (s *Scheduler) NeedLeaderElection() bool { return true }

// Start rebuilds the state from the informer cache, then runs cycles until
// ctx ends; it returns once its writes in flight are done, so that a new
// leader sees them.
func (s *Scheduler) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("scheduler")
	if err := s.rebuild(ctx); err != nil {
		return err
	}
	writes := newWriteQueue(max(1, s.Writers/4))
	// Writes in flight finish even as the manager stops, within a bound.
	writeCtx, cancelWrites := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWrites()
	writers := writes.run(writeCtx, s.Writers, s.writeAdmission, s.writePending)
	defer func() {
		writes.close()
		done := make(chan struct{})
		go func() { writers.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cancelWrites()
			<-done
		}
	}()
	s.queued = map[string]queuedVerdict{}
	if s.MessageRefreshesPerSecond > 0 {
		s.refreshBudget = rate.NewLimiter(rate.Limit(s.MessageRefreshesPerSecond), max(1, int(s.MessageRefreshesPerSecond)))
	}
	log.Info("admitting")
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.State.Queues.Wake():
		}
		s.cycle(ctx, writes)
	}
}

// rebuild makes sure that every reservation recorded in the API is charged
// before the first cycle: after a restart or a leader change nothing may be
// admitted beyond quota. It also primes the queues and queue definitions so
// the first cycle doesn't wait for each reconciler.
func (s *Scheduler) rebuild(ctx context.Context) error {
	cqs := &kueue.ClusterQueueList{}
	if err := s.Client.List(ctx, cqs); err != nil {
		return fmt.Errorf("listing ClusterQueues: %w", err)
	}
	for i := range cqs.Items {
		cq := &cqs.Items[i]
		if _, known := s.State.Cache.ClusterQueue(cq.Name); !known {
			active := meta.FindStatusCondition(cq.Status.Conditions, kueue.ConditionActive)
			if active == nil {
				active = &metav1.Condition{Status: metav1.ConditionFalse, Message: "not evaluated yet"}
			}
			s.State.Cache.SetClusterQueue(cq, active.Status == metav1.ConditionTrue, active.Message)
		}
	}
	for _, list := range []client.ObjectList{&kueue.LocalQueueList{}, &kueue.CohortList{}, &kueue.ResourceFlavorList{}, &corev1.NamespaceList{}} {
		if err := s.Client.List(ctx, list); err != nil {
			return fmt.Errorf("listing %T: %w", list, err)
		}
		_ = meta.EachListItem(list, func(obj runtime.Object) error {
			switch o := obj.(type) {
			case *kueue.LocalQueue:
				s.State.Cache.SetLocalQueue(o)
			case *kueue.Cohort:
				s.State.Cache.SetCohort(o)
			case *kueue.ResourceFlavor:
				s.State.Cache.SetFlavor(o)
			case *corev1.Namespace:
				s.State.Cache.SetNamespace(o.Name, o.Labels)
			}
			return nil
		})
	}
	wls := &kueue.WorkloadList{}
	if err := s.Client.List(ctx, wls); err != nil {
		return fmt.Errorf("listing Workloads: %w", err)
	}
	for i := range wls.Items {
		wl := &wls.Items[i]
		switch {
		case !wl.DeletionTimestamp.IsZero() || workload.IsFinished(wl):
		case workload.HasQuotaReservation(wl):
			s.State.Cache.SetReserved(wl)
		case workload.IsActive(wl) && !s.State.Cache.Holds(workload.Key(wl)):
			s.State.Queues.AddOrUpdate(workload.NewInfo(wl))
		}
	}
	return nil
}

// cycle decides and hands the writes to the writers.
func (s *Scheduler) cycle(ctx context.Context, writes *writeQueue) {
	started := s.Clock.Now()
	// Before the snapshot: a requeue after it voids its park verdicts.
	requeues := s.State.Queues.Requeues()
	snap := s.State.Cache.Snapshot()
	pending := s.State.Queues.Pending()
	if len(pending) == 0 {
		return
	}
	decisions := scheduler.Schedule(snap, pending)
	observeCycle(s.Clock.Since(started))
	for i := range decisions {
		d := decisions[i]
		if d.Admitted() {
			s.State.assume(d.Info, d.ClusterQueue, d.Usage, s.Clock.Now())
			admittedWorkloads.Inc()
			s.dequeueVerdict(d.Info.Key)
			writes.admit(d)
			continue
		}
		for _, v := range d.Victims {
			s.State.Cache.AssumeEvicting(v.Key)
			go s.writePreemption(ctx, v, d)
		}
		switch s.pendingWrite(d) {
		case writeNow:
			s.queueVerdict(d)
			writes.verdict(d)
		case writeLater:
			s.refreshLater(d.Info.Key)
		}
		if d.Park {
			s.State.Queues.Park(d.Info, requeues)
		}
	}
	s.queuedMu.Lock()
	if len(s.queued) > 2*len(pending)+1024 {
		s.queued = map[string]queuedVerdict{}
	}
	s.queuedMu.Unlock()
	ctrl.LoggerFrom(ctx).V(3).Info("cycle", "pending", len(pending), "decisions", len(decisions))
}

type pendingWriteVerdict int

const (
	noWrite pendingWriteVerdict = iota
	writeNow
	writeLater
)

type queuedVerdict struct {
	reason, message string
	at              time.Time
}

// pendingWrite decides whether a pending verdict is written: never when the
// condition already says it or the same verdict is on its way, at once for a
// new reason, and for a message whose numbers changed, at most once per
// MessageRefresh per workload and MessageRefreshesPerSecond in all.
func (s *Scheduler) pendingWrite(d scheduler.Decision) pendingWriteVerdict {
	conditions := s.State.written.conditions(d.Info)
	if !workload.PendingDiffers(conditions, d.Reason, d.Message) {
		return noWrite
	}
	s.queuedMu.Lock()
	last, queued := s.queued[d.Info.Key]
	s.queuedMu.Unlock()
	if queued && last.reason == d.Reason && last.message == d.Message {
		return noWrite
	}
	sameReason := queued && last.reason == d.Reason
	if !queued {
		c := meta.FindStatusCondition(conditions, kueue.WorkloadQuotaReserved)
		sameReason = c != nil && c.Status == metav1.ConditionFalse && c.Reason == d.Reason
	}
	switch {
	case !sameReason:
		return writeNow
	case queued && s.Clock.Since(last.at) < s.MessageRefresh:
		return writeLater
	case s.refreshBudget != nil && !s.refreshBudget.Allow():
		return writeLater
	}
	return writeNow
}

func (s *Scheduler) queueVerdict(d scheduler.Decision) {
	s.queuedMu.Lock()
	defer s.queuedMu.Unlock()
	s.queued[d.Info.Key] = queuedVerdict{reason: d.Reason, message: d.Message, at: s.Clock.Now()}
}

// dequeueVerdict forgets the verdict sent for a workload: it was admitted,
// or the write failed and the verdict must be sent again.
func (s *Scheduler) dequeueVerdict(key string) {
	s.queuedMu.Lock()
	defer s.queuedMu.Unlock()
	delete(s.queued, key)
}

// refreshLater requeues a parked workload once the refresh interval passed,
// so that its message is brought up to date even if nothing else happens.
func (s *Scheduler) refreshLater(key string) {
	s.refreshMu.Lock()
	defer s.refreshMu.Unlock()
	if s.refreshDue == nil {
		s.refreshDue = map[string]bool{}
	}
	s.refreshDue[key] = true
	if s.refreshArmed {
		return
	}
	s.refreshArmed = true
	time.AfterFunc(s.MessageRefresh, func() {
		s.refreshMu.Lock()
		due := s.refreshDue
		s.refreshDue, s.refreshArmed = nil, false
		s.refreshMu.Unlock()
		s.State.Queues.RequeueParked(func(info *workload.Info) bool { return due[info.Key] })
	})
}

// writeAdmission writes status.admission and the conditions in one patch,
// conditional on the version the decision was made on.
func (s *Scheduler) writeAdmission(ctx context.Context, d scheduler.Decision) {
	base := s.State.written.latest(d.Info)
	wl := base.DeepCopy()
	patch := client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})
	workload.SetAdmitted(wl, d.Admission, s.Clock.Now())
	err := s.Client.Status().Patch(ctx, wl, patch)
	s.State.written.forget(d.Info.Key)
	if err == nil {
		return
	}
	// Give the quota back and look at the workload again as it is now.
	s.State.quotaFreed(s.State.Cache.Release(d.Info.Key))
	if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
		ctrl.LoggerFrom(ctx).Error(err, "writing an admission", "workload", d.Info.Key)
	}
	latest := &kueue.Workload{}
	if getErr := s.Client.Get(ctx, client.ObjectKey{Namespace: d.Info.Namespace, Name: d.Info.Name}, latest); getErr != nil {
		return
	}
	if !workload.HasQuotaReservation(latest) && !workload.IsFinished(latest) && latest.DeletionTimestamp.IsZero() {
		s.State.setPending(workload.NewInfo(latest), workload.IsActive(latest))
	}
}

// writePreemption evicts a victim: Evicted=True (reason Preempted) and
// Preempted=True (the reason the cycle gave) naming the preemptor, in one
// patch, retried on conflicts so that a decided preemption isn't lost. Its
// job integration stops the job and gives the quota back.
func (s *Scheduler) writePreemption(ctx context.Context, victim *scheduler.Candidate, d scheduler.Decision) {
	namespace, name, _ := strings.Cut(victim.Key, "/")
	reason := d.PreemptionReasons[victim.Key]
	why := map[string]string{
		kueue.InClusterQueueReason:                "prioritization in ClusterQueue " + d.ClusterQueue,
		kueue.InCohortReclamationReason:           "reclamation within the cohort by ClusterQueue " + d.ClusterQueue,
		kueue.InCohortReclaimWhileBorrowingReason: "reclamation within the cohort while borrowing, by ClusterQueue " + d.ClusterQueue,
		kueue.InCohortFairSharingReason:           "fair sharing within the cohort, by ClusterQueue " + d.ClusterQueue,
	}[reason]
	message := fmt.Sprintf("Preempted to accommodate workload %s (UID: %s) due to %s", d.Info.Key, d.Info.UID, why)
	var reader client.Reader = s.Client
	if s.APIReader != nil {
		reader = s.APIReader
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		wl := &kueue.Workload{}
		if err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, wl); err != nil {
			return err
		}
		if !workload.HasQuotaReservation(wl) || workload.IsEvicting(wl) || workload.IsFinished(wl) {
			return nil
		}
		patch := client.MergeFromWithOptions(wl.DeepCopy(), client.MergeFromWithOptimisticLock{})
		now := s.Clock.Now()
		workload.MarkEvicted(wl, kueue.EvictedByPreemption, message, now)
		meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadPreempted, Status: metav1.ConditionTrue,
			Reason: reason, Message: message, LastTransitionTime: metav1.NewTime(now), ObservedGeneration: wl.Generation})
		return s.Client.Status().Patch(ctx, wl, patch)
	})
	if client.IgnoreNotFound(err) != nil {
		s.State.Cache.ForgetEvicting(victim.Key)
		ctrl.LoggerFrom(ctx).Error(err, "preempting", "victim", victim.Key, "preemptor", d.Info.Key)
	}
}

// writePending records why a workload waits; a conflict means a newer
// version exists, which is evaluated again anyway.
func (s *Scheduler) writePending(ctx context.Context, d scheduler.Decision) {
	base := s.State.written.latest(d.Info)
	wl := base.DeepCopy()
	patch := client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})
	workload.SetPending(wl, d.Reason, d.Message, s.Clock.Now())
	err := s.Client.Status().Patch(ctx, wl, patch)
	if err == nil {
		s.State.written.record(d.Info.Key, base.ResourceVersion, wl)
		return
	}
	// Evaluate it again later: a status change by someone else does not
	// requeue a parked workload by itself.
	s.dequeueVerdict(d.Info.Key)
	if apierrors.IsNotFound(err) {
		return
	}
	s.refreshLater(d.Info.Key)
	if !apierrors.IsConflict(err) {
		ctrl.LoggerFrom(ctx).Error(err, "writing a pending reason", "workload", d.Info.Key)
	}
}
