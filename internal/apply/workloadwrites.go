package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/metrics"
	"github.com/sluicehq/sluice/internal/patch"
	"github.com/sluicehq/sluice/internal/scheduler"
	"github.com/sluicehq/sluice/internal/workload"
)

// Kinds of writes, as they appear in the writes metric.
const (
	writeAdmission  = "admission"
	writePending    = "pending"
	writePreemption = "preemption"
	writeRecheck    = "recheck"
	writeEviction   = "eviction"
	writeQueue      = "queue-status"
)

// Workloads makes every Workload status write of sluice through the
// Dispatcher and files their outcomes with the Tracker.
type Workloads struct {
	Client client.Client
	// APIReader reads a Workload from the API server when the informer's
	// copy proved stale (a conflict) or an outcome must be settled.
	APIReader  client.Reader
	Tracker    *Tracker
	Dispatcher *Dispatcher
	Clock      Clock
	// Failures backs off a workload whose admission writes fail (a
	// Workload webhook that is down): its next admission waits longer each
	// time, instead of being decided and refused as fast as cycles run.
	Failures     workqueue.TypedRateLimiter[string]
	failuresOnce sync.Once
	// Metrics counts the admissions that land; nil counts nothing.
	Metrics *metrics.Recorder
}

func workloadObject(key string) string { return "Workload/" + key }

// Admit queues the write of a decided admission, assumed as id.
func (w *Workloads) Admit(d scheduler.Decision, id AdmissionID) {
	w.Dispatcher.Add(Write{Object: workloadObject(d.Info.Key), Kind: writeAdmission, Class: Urgent,
		Run: func(ctx context.Context) Outcome { w.writeAdmission(ctx, d, id); return Done }})
}

// writeAdmission writes status.admission and the conditions in one patch,
// conditional on the version the decision was made on. A refusal gives the
// quota back; an unknown outcome keeps it charged; either way a read of the
// workload settles it, retried until it succeeds.
func (w *Workloads) writeAdmission(ctx context.Context, d scheduler.Decision, id AdmissionID) {
	key := d.Info.Key
	wl := w.Tracker.written.latest(d.Info) // a copy of its own
	checks := w.neededChecks(d)
	workload.SetReserved(wl, d.Admission, checks, w.Clock.Now())
	sentOn := wl.ResourceVersion
	err := w.Client.Status().Patch(ctx, wl, admissionPatch(wl))
	countWrite(writeAdmission, err)
	w.Tracker.written.forget(key)
	var delay time.Duration
	switch {
	case err == nil:
		w.failures().Forget(key)
		w.Tracker.Landed(key, id, wl.ResourceVersion) // the response's version
		w.Metrics.Admitted(metrics.Admission{ClusterQueue: d.ClusterQueue, Namespace: d.Info.Namespace, LocalQueue: d.Info.LocalQueue,
			PriorityClass: priorityClassName(wl), Waited: w.Clock.Since(d.Info.QueueTime), Checked: len(checks) > 0})
		return
	case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
		// A newer version, or none: nothing failed, look again at once.
		w.Tracker.Refused(key, id)
	case refusedByAPI(err):
		ctrl.LoggerFrom(ctx).Error(err, "writing an admission: refused", "workload", key)
		w.Tracker.Refused(key, id)
		delay = w.failures().When(key)
	default:
		ctrl.LoggerFrom(ctx).Error(err, "writing an admission: outcome unknown, quota stays charged until a read tells", "workload", key)
		w.Tracker.Uncertain(key, id, sentOn)
		delay = w.failures().When(key)
	}
	w.recheck(key, id, delay)
}

// neededChecks are the admission checks the decision's ClusterQueue asks
// of it, from the ClusterQueue the cycle decided on.
func (w *Workloads) neededChecks(d scheduler.Decision) []string {
	cq, ok := w.Tracker.Cache.ClusterQueue(d.ClusterQueue)
	if !ok {
		return nil
	}
	return workload.NeededChecks(cq.Spec.AdmissionChecksStrategy, d.Admission)
}

// admissionPatch is the merge patch of an admission: the fields SetReserved
// sets (a list replaces the old one whole in a merge patch; checks a
// ClusterQueue without any does not ask are removed by null) and the
// version it was decided on. Built from them alone: diffing two copies of
// the whole Workload, as client.MergeFrom does, cost more CPU than any
// other part of an admission write.
func admissionPatch(wl *kueue.Workload) client.Patch {
	raw, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": wl.ResourceVersion},
		"status":   map[string]any{"admission": wl.Status.Admission, "conditions": wl.Status.Conditions, "admissionChecks": wl.Status.AdmissionChecks},
	})
	if err != nil {
		// Marshalling API types does not fail; were it to, the empty
		// patch is refused by the API server and the admission retried.
		return client.RawPatch(types.MergePatchType, nil)
	}
	return client.RawPatch(types.MergePatchType, raw)
}

func (w *Workloads) failures() workqueue.TypedRateLimiter[string] {
	w.failuresOnce.Do(func() {
		if w.Failures == nil {
			w.Failures = workqueue.NewTypedItemExponentialFailureRateLimiter[string](100*time.Millisecond, time.Minute)
		}
	})
	return w.Failures
}

// refusedByAPI tells whether the API server answered that it did not make
// a write (a 4xx other than a timeout): anything else may have landed.
func refusedByAPI(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	code := status.Status().Code
	return code >= 400 && code < 500 && code != http.StatusRequestTimeout
}

// recheck reads a workload whose admission id is uncertain or refused from
// the API server and settles that admission, after delay; a failed read is
// retried after the workload's backoff, so nothing waits for a resync. The
// read settles only admission id: the watch may settle it meanwhile and a
// later cycle admit the workload again, and that admission's write, queued
// behind this read, must keep its charge.
func (w *Workloads) recheck(key string, id AdmissionID, delay time.Duration) {
	w.Dispatcher.Add(Write{Object: workloadObject(key), Kind: writeRecheck, Class: Urgent, Delay: delay, Run: func(ctx context.Context) Outcome {
		if !w.Tracker.Unsettled(key, id) {
			return Done // the watch settled it
		}
		namespace, name, _ := strings.Cut(key, "/")
		latest := &kueue.Workload{}
		err := w.APIReader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, latest)
		countWrite(writeRecheck, err)
		switch {
		case apierrors.IsNotFound(err):
			w.Tracker.Gone(key, id)
		case err != nil:
			return Retry
		default:
			w.Tracker.Resolve(latest, id)
		}
		return Done
	}})
}

// Preempt queues the eviction of a victim: Evicted=True (reason Preempted)
// and Preempted=True (the reason the cycle gave) naming the preemptor, in
// one patch, retried until it lands or is moot (the watch or a read shows
// the victim stopped, finished or gone). A job's integration then
// stops the job and gives the quota back; a workload with no job to stop
// loses its reservation in the same patch (one write instead of two).
func (w *Workloads) Preempt(victim *scheduler.Candidate, d scheduler.Decision) {
	reason := d.PreemptionReasons[victim.Key]
	why := map[string]string{
		kueue.InClusterQueueReason:                "prioritization in ClusterQueue " + d.ClusterQueue,
		kueue.InCohortReclamationReason:           "reclamation within the cohort by ClusterQueue " + d.ClusterQueue,
		kueue.InCohortReclaimWhileBorrowingReason: "reclamation within the cohort while borrowing, by ClusterQueue " + d.ClusterQueue,
		kueue.InCohortFairSharingReason:           "fair sharing within the cohort, by ClusterQueue " + d.ClusterQueue,
	}[reason]
	message := fmt.Sprintf("Preempted to accommodate workload %s (UID: %s) due to %s", d.Info.Key, d.Info.UID, why)
	w.Tracker.Preempting(victim.Key)
	// Read from the API server: a victim was often written just before
	// (admitted, or its job finished) and the informer's copy would be
	// refused. But first ask the Tracker: once the watch showed the victim
	// finished, evicted or gone, the preemption is moot without a read.
	write := w.patchWrite(victim.Key, writePreemption, w.APIReader, func(wl *kueue.Workload) bool {
		if !workload.HasQuotaReservation(wl) || workload.IsEvicting(wl) || workload.IsFinished(wl) {
			return false
		}
		now := w.Clock.Now()
		meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadPreempted, Status: metav1.ConditionTrue,
			Reason: reason, Message: message, LastTransitionTime: metav1.NewTime(now), ObservedGeneration: wl.Generation})
		if w.Tracker.StopsFirst != nil && w.Tracker.StopsFirst(wl) {
			workload.MarkEvicted(wl, kueue.EvictedByPreemption, message, now)
		} else {
			workload.SetEvicted(wl, kueue.EvictedByPreemption, message, true, now)
		}
		return true
	}, func(before, after *kueue.Workload) {
		w.Metrics.Preempted(d.ClusterQueue, reason)
		w.CountEviction(before, after)
	})
	w.Dispatcher.Add(Write{Object: workloadObject(victim.Key), Kind: writePreemption, Class: Urgent, Run: func(ctx context.Context) Outcome {
		if !w.Tracker.StillPreempting(victim.Key) {
			countWrite(writePreemption, errSkipped)
			return Done
		}
		return write(ctx)
	}})
}

// Evict queues a status change of a reserved workload that the
// WorkloadReconciler decided (an eviction, or clearing a reservation);
// mutate is applied to the newest copy at write time and reports whether it
// changed anything; landed (nil: nothing) sees the copy before the change
// and the one written.
func (w *Workloads) Evict(key string, mutate func(*kueue.Workload) bool, landed func(before, after *kueue.Workload)) {
	w.Dispatcher.Add(Write{Object: workloadObject(key), Kind: writeEviction, Class: Urgent,
		Run: w.patchWrite(key, writeEviction, w.Client, mutate, landed)})
}

// Update queues a status change of a workload that the WorkloadReconciler
// decided (its admission checks or conditions), counted in the writes
// metric under kind; mutate and landed are as for Evict.
func (w *Workloads) Update(key, kind string, mutate func(*kueue.Workload) bool, landed func(before, after *kueue.Workload)) {
	w.Dispatcher.Add(Write{Object: workloadObject(key), Kind: kind, Class: Urgent,
		Run: w.patchWrite(key, kind, w.Client, mutate, landed)})
}

// CountEviction counts a written eviction (after) under its Evicted reason,
// in the ClusterQueue it was admitted to (before: the same write may have
// cleared the admission).
func (w *Workloads) CountEviction(before, after *kueue.Workload) {
	c := meta.FindStatusCondition(after.Status.Conditions, kueue.WorkloadEvicted)
	if c == nil || c.Status != metav1.ConditionTrue {
		return
	}
	w.Metrics.Evicted(metricsWorkload(before), c.Reason)
}

// metricsWorkload names a workload's queues for its series.
func metricsWorkload(wl *kueue.Workload) metrics.Workload {
	m := metrics.Workload{Namespace: wl.Namespace, LocalQueue: string(wl.Spec.QueueName), PriorityClass: priorityClassName(wl)}
	if a := wl.Status.Admission; a != nil {
		m.ClusterQueue = string(a.ClusterQueue)
	}
	return m
}

// patchStatus sends a status patch of wl and counts it as a write of kind.
func (w *Workloads) patchStatus(ctx context.Context, wl *kueue.Workload, p client.Patch, kind string) error {
	err := w.Client.Status().Patch(ctx, wl, p)
	countWrite(kind, err)
	return err
}

// patchWrite is a status patch of a Workload: mutate runs on the copy
// first read from reader (nothing is written when it reports no change),
// and after a conflict on the API server's. A failure is retried after the
// workload's backoff; a missing workload needs nothing.
func (w *Workloads) patchWrite(key, kind string, first client.Reader, mutate func(*kueue.Workload) bool, landed func(before, after *kueue.Workload)) func(context.Context) Outcome {
	return func(ctx context.Context) Outcome {
		namespace, name, _ := strings.Cut(key, "/")
		for _, reader := range []client.Reader{first, w.APIReader} {
			wl := &kueue.Workload{}
			if err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, wl); err != nil {
				if apierrors.IsNotFound(err) {
					return Done
				}
				return Retry
			}
			before := wl.DeepCopy()
			onVersion := patch.OnVersion(before)
			if !mutate(wl) {
				countWrite(kind, errSkipped)
				return Done
			}
			err := w.patchStatus(ctx, wl, onVersion, kind)
			switch {
			case err == nil:
				if landed != nil {
					landed(before, wl)
				}
				return Done
			case apierrors.IsNotFound(err):
				return Done
			case !apierrors.IsConflict(err):
				ctrl.LoggerFrom(ctx).V(2).Info("writing a workload's status", "workload", key, "write", kind, "error", err.Error())
				return Retry
			}
			// The informer's copy was stale: try once more on the API's.
		}
		return Retry
	}
}

// MetricsAdmission names a workload's queues for its admission series;
// Checked tells whether its admission waited for admission checks. The
// caller sets Waited.
func MetricsAdmission(wl *kueue.Workload) metrics.Admission {
	m := metricsWorkload(wl)
	return metrics.Admission{ClusterQueue: m.ClusterQueue, Namespace: m.Namespace, LocalQueue: m.LocalQueue, PriorityClass: m.PriorityClass,
		Checked: len(wl.Status.AdmissionChecks) > 0}
}

// priorityClassName is the priority_class label of a workload's series:
// the name of its priority class, "" without one.
func priorityClassName(wl *kueue.Workload) string {
	if ref := wl.Spec.PriorityClassRef; ref != nil {
		return ref.Name
	}
	return ""
}
