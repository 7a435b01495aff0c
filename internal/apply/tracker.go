package apply

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/cache"
	"github.com/sluicehq/sluice/internal/metrics"
	"github.com/sluicehq/sluice/internal/queue"
	"github.com/sluicehq/sluice/internal/workload"
)

// Tracker owns admission state: which workloads wait (the queues), which
// hold quota (the cache), and the admissions and preemptions this manager
// decided that the watch has not confirmed yet. Every move of a workload
// between those happens here, under one lock; the package doc draws them.
type Tracker struct {
	Cache  *cache.Cache
	Queues *queue.Queues
	// Resources is how pending workloads' requests count (the
	// configuration's resources section); nil counts them as they are.
	Resources *workload.ResourcePolicy
	// StopsFirst tells whether a workload's job must stop before its
	// reservation is cleared: such a Workload, deleted while it holds a
	// reservation, keeps its quota until its job's integration lets it go.
	StopsFirst func(*kueue.Workload) bool
	// Metrics counts the workloads that finish holding a reservation;
	// nil counts nothing.
	Metrics *metrics.Recorder

	mu sync.Mutex
	// flights are the admissions decided here that the watch has not shown.
	flights map[string]flight
	// lastAdmission is the last AdmissionID given.
	lastAdmission AdmissionID
	// applied is, per workload, the version the queues and the cache last
	// settled on: an older one, read late, is not applied over it.
	applied map[string]string
	// interleave is a test hook (nil in production), run where an
	// operation released mu with work left.
	interleave func(op string)
	// preempting are reserved workloads whose preemption was decided and
	// not yet seen written: they stay out of the candidates.
	preempting map[string]bool
	// finished are the finished Workloads that are not being deleted, by
	// key, with the queues they finished in (for the finished gauges).
	finished map[string]finishedIn
	// unready are the admitted workloads whose pods are not ready yet
	// (waitForPodsReady.blockAdmission waits for them).
	unready map[string]bool

	seenMu sync.Mutex
	seen   map[string]string // queue definition kind/name -> what was last fed

	// written are the pending verdicts written that the watch hasn't shown.
	written *ownWrites
}

// finishedIn are the queues a workload finished in.
type finishedIn struct{ clusterQueue, localQueue string }

// NewTracker makes an empty Tracker.
func NewTracker() *Tracker {
	return &Tracker{Cache: cache.New(), Queues: queue.New(), flights: map[string]flight{}, applied: map[string]string{},
		preempting: map[string]bool{}, finished: map[string]finishedIn{}, unready: map[string]bool{}, seen: map[string]string{}, written: newOwnWrites()}
}

// noteFinished keeps the finished Workloads that remain for the gauges:
// one finished while admitted, and not being deleted. The caller holds
// mu.
func (t *Tracker) noteFinished(key string, wl *kueue.Workload) {
	if workload.IsFinished(wl) && wl.DeletionTimestamp.IsZero() && wl.Status.Admission != nil {
		t.finished[key] = finishedIn{clusterQueue: string(wl.Status.Admission.ClusterQueue), localQueue: wl.Namespace + "/" + string(wl.Spec.QueueName)}
		return
	}
	delete(t.finished, key)
}

// FinishedCounts are the finished Workloads that remain, per ClusterQueue
// and per LocalQueue (namespace/name).
func (t *Tracker) FinishedCounts() (byClusterQueue, byLocalQueue map[string]int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	byClusterQueue, byLocalQueue = map[string]int{}, map[string]int{}
	for _, f := range t.finished {
		byClusterQueue[f.clusterQueue]++
		byLocalQueue[f.localQueue]++
	}
	return byClusterQueue, byLocalQueue
}

// settle makes the queues and the cache say what the Workload says: a
// reservation is charged, a pending active workload waits, a finished or
// deleted one is forgotten. The caller holds mu.
func (t *Tracker) settle(key string, wl *kueue.Workload) (freed string) {
	t.applied[key] = wl.ResourceVersion
	freed = t.settleQueues(key, wl)
	t.noteFinished(key, wl)
	t.noteUnready(key, wl)
	return freed
}

// noteUnready keeps the admitted workloads whose pods are not ready; the
// last one to get ready wakes the admitter. The caller holds mu.
func (t *Tracker) noteUnready(key string, wl *kueue.Workload) {
	if workload.HasQuotaReservation(wl) && workload.IsAdmitted(wl) && !workload.PodsReady(wl) && !workload.IsEvicting(wl) &&
		!workload.IsFinished(wl) && wl.DeletionTimestamp.IsZero() {
		t.unready[key] = true
		return
	}
	if t.unready[key] {
		delete(t.unready, key)
		if len(t.unready) == 0 {
			t.Queues.Signal()
		}
		t.countReady(wl)
	}
}

// countReady counts an admitted workload whose pods just became ready
// (seen unready before: one a restarted manager finds ready is not
// counted twice).
func (t *Tracker) countReady(wl *kueue.Workload) {
	ready := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadPodsReady)
	admitted := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadAdmitted)
	if ready == nil || ready.Status != metav1.ConditionTrue || admitted == nil || admitted.Status != metav1.ConditionTrue {
		return
	}
	m := MetricsAdmission(wl)
	m.Waited = ready.LastTransitionTime.Sub(workload.QueueTime(wl))
	t.Metrics.PodsReady(m, ready.LastTransitionTime.Sub(admitted.LastTransitionTime.Time))
}

// AdmissionBlocked names an admitted workload whose pods are not ready
// yet, or says an admission is on its way (its pods will not be ready at
// once): waitForPodsReady.blockAdmission admits nothing more meanwhile.
func (t *Tracker) AdmissionBlocked() (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for key := range t.unready {
		return key, true
	}
	for key := range t.flights {
		return key, true
	}
	return "", false
}

// settleQueues is settle's part for the queues and the cache.
func (t *Tracker) settleQueues(key string, wl *kueue.Workload) (freed string) {
	deleting := !wl.DeletionTimestamp.IsZero()
	reserved := workload.HasQuotaReservation(wl) && !workload.IsFinished(wl)
	switch {
	case reserved && (!deleting || t.stillInUse(wl)):
		t.Queues.Delete(key)
		if workload.IsEvicting(wl) {
			delete(t.preempting, key)
		}
		return t.Cache.SetReserved(wl, t.preempting[key])
	case deleting || workload.IsFinished(wl):
		freed := t.forgetLocked(key)
		if freed != "" && workload.IsFinished(wl) {
			// Counted once: the first version that shows it finished
			// releases its reservation.
			m := metricsWorkload(wl)
			m.ClusterQueue = freed
			t.Metrics.Finished(m)
		}
		return freed
	default:
		delete(t.preempting, key)
		freed = t.Cache.Release(key)
		if workload.Admissible(wl) {
			t.Queues.AddOrUpdate(workload.NewInfoWith(wl, t.Resources))
		} else {
			t.Queues.Delete(key)
		}
		return freed
	}
}

// stillInUse tells whether a Workload being deleted may still have a job
// running on its reservation: it belongs to a job that stops before its
// quota goes, and carries the resource-in-use finalizer that job's
// integration removes once nothing runs.
func (t *Tracker) stillInUse(wl *kueue.Workload) bool {
	return controllerutil.ContainsFinalizer(wl, kueue.ResourceInUseFinalizerName) &&
		t.StopsFirst != nil && t.StopsFirst(wl)
}

// StillInUse is stillInUse for a Workload being deleted that holds a
// reservation and has not finished.
func (t *Tracker) StillInUse(wl *kueue.Workload) bool {
	return !wl.DeletionTimestamp.IsZero() && workload.HasQuotaReservation(wl) && !workload.IsFinished(wl) && t.stillInUse(wl)
}

// Deleted drops a Workload the watch showed deleted at version (its last
// state's; empty when unknown), unless what the Tracker settled on since is
// newer: a read that found another Workload created under the same name (a
// recheck, say) before the watch delivered the first one's deletion.
// Forgetting then would drop the new one's admission and charge while its
// write may still land.
func (t *Tracker) Deleted(key, version string) {
	t.mu.Lock()
	if order, ok := compareVersions(t.applied[key], version); ok && order > 0 {
		t.mu.Unlock()
		return
	}
	delete(t.applied, key)
	freed := t.forgetLocked(key)
	t.mu.Unlock()
	t.written.forget(key)
	t.quotaFreed(freed)
}

func (t *Tracker) forgetLocked(key string) string {
	if _, ok := t.flights[key]; ok {
		t.endFlight(key)
	}
	if t.unready[key] {
		delete(t.unready, key)
		if len(t.unready) == 0 {
			t.Queues.Signal()
		}
	}
	delete(t.finished, key)
	delete(t.preempting, key)
	t.Queues.Delete(key)
	return t.Cache.Release(key)
}

// Preempting records a decided preemption: the victim's quota counts as on
// its way back and no later cycle picks it again, until the watch shows it
// evicted or gone.
func (t *Tracker) Preempting(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.preempting[key] = true
	t.Cache.SetEvicting(key, true)
}

// StillPreempting tells whether a decided preemption is still to be made:
// the watch has not shown its victim evicted, finished, pending or gone.
func (t *Tracker) StillPreempting(key string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.preempting[key]
}

// quotaFreed wakes the parked workloads that share quota with a
// ClusterQueue that got some back.
func (t *Tracker) quotaFreed(clusterQueue string) {
	if clusterQueue == "" {
		return
	}
	t.Queues.RequeueClusterQueues(t.Cache.CohortMembers(clusterQueue))
}

// fed records a version of what was fed for a queue definition and, when
// it differs from the last one, requeues the parked workloads.
func (t *Tracker) fed(key, version string) {
	t.seenMu.Lock()
	changed := t.seen[key] != version
	t.seen[key] = version
	t.seenMu.Unlock()
	if changed {
		t.Queues.RequeueAll()
	}
}

// forgetDefinition drops what was fed for a deleted object, and requeues the
// parked workloads: an object created again under the same name is new,
// even at the same generation, and what waited for it may fit now.
func (t *Tracker) forgetDefinition(key string) {
	t.seenMu.Lock()
	delete(t.seen, key)
	t.seenMu.Unlock()
	t.Queues.RequeueAll()
}

// specVersion identifies a version of an object's spec: its UID (an object
// deleted and created again starts at generation 1 again) and generation.
func specVersion(uid types.UID, generation int64) string {
	return string(uid) + "/" + strconv.FormatInt(generation, 10) + "/"
}

func labelsVersion(l map[string]string) string {
	keys := slices.Sorted(maps.Keys(l))
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + l[k] + ",")
	}
	return b.String()
}

// The queue definitions: a change that may let a parked workload fit (a
// queue, cohort, flavor or namespace changed) requeues the parked
// workloads; repeated events with nothing new do not.

// SetClusterQueue records a ClusterQueue and its Active verdict.
func (t *Tracker) SetClusterQueue(cq *kueue.ClusterQueue, active metav1.Condition) {
	t.Cache.SetClusterQueue(cq, active.Status == metav1.ConditionTrue, active.Message)
	t.fed("cq/"+cq.Name, specVersion(cq.UID, cq.Generation)+string(active.Status)+active.Message)
}

// DeleteClusterQueue forgets a ClusterQueue.
func (t *Tracker) DeleteClusterQueue(name string) {
	t.Cache.DeleteClusterQueue(name)
	t.forgetDefinition("cq/" + name)
}

// SetLocalQueue records a LocalQueue.
func (t *Tracker) SetLocalQueue(lq *kueue.LocalQueue) {
	t.Cache.SetLocalQueue(lq)
	t.fed("lq/"+lq.Namespace+"/"+lq.Name, specVersion(lq.UID, lq.Generation))
}

// DeleteLocalQueue forgets a LocalQueue by namespace/name.
func (t *Tracker) DeleteLocalQueue(key string) {
	t.Cache.DeleteLocalQueue(key)
	t.forgetDefinition("lq/" + key)
}

// SetCohort records a Cohort.
func (t *Tracker) SetCohort(co *kueue.Cohort) {
	t.Cache.SetCohort(co)
	t.fed("cohort/"+co.Name, specVersion(co.UID, co.Generation))
}

// DeleteCohort forgets a Cohort.
func (t *Tracker) DeleteCohort(name string) {
	t.Cache.DeleteCohort(name)
	t.forgetDefinition("cohort/" + name)
}

// SetFlavor records a ResourceFlavor.
func (t *Tracker) SetFlavor(rf *kueue.ResourceFlavor) {
	t.Cache.SetFlavor(rf)
	t.fed("rf/"+rf.Name, specVersion(rf.UID, rf.Generation))
}

// DeleteFlavor forgets a ResourceFlavor.
func (t *Tracker) DeleteFlavor(name string) {
	t.Cache.DeleteFlavor(name)
	t.forgetDefinition("rf/" + name)
}

// SetNamespace records a namespace's labels.
func (t *Tracker) SetNamespace(name string, labels map[string]string) {
	t.Cache.SetNamespace(name, labels)
	// Namespace labels are their version; a namespace created again under
	// the same name was forgotten on delete, so its labels count as new.
	t.fed("ns/"+name, labelsVersion(labels))
}

// DeleteNamespace forgets a namespace.
func (t *Tracker) DeleteNamespace(name string) {
	t.Cache.DeleteNamespace(name)
	t.forgetDefinition("ns/" + name)
}
