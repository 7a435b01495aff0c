package metrics

import (
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// waitBuckets are Kueue's wait-time buckets: 1 s, then 2.5 s doubling.
func waitBuckets(count int) []float64 {
	return append([]float64{1}, prometheus.ExponentialBuckets(2.5, 2, count-1)...)
}

// The event series: counted where sluice decides or sees the event.
var (
	admissionAttempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kueue_admission_attempts_total",
		Help: "Admission cycles, by result: success when the cycle admitted at least one workload, inadmissible otherwise.",
	}, []string{"result", "replica_role"})
	admissionAttemptDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "kueue_admission_attempt_duration_seconds",
		Help: "Time an admission cycle takes to decide, by result as kueue_admission_attempts_total.",
	}, []string{"result", "replica_role"})
	quotaReserved = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kueue_quota_reserved_workloads_total",
		Help: "Workloads that got a quota reservation in the ClusterQueue.",
	}, []string{"cluster_queue", "priority_class", "replica_role"})
	quotaReservedWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kueue_quota_reserved_wait_time_seconds",
		Help:    "Time from a workload's queueing (creation, or its last requeue) to its quota reservation.",
		Buckets: waitBuckets(14),
	}, []string{"cluster_queue", "priority_class", "replica_role"})
	admittedTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kueue_admitted_workloads_total",
		Help: "Workloads admitted in the ClusterQueue.",
	}, []string{"cluster_queue", "priority_class", "replica_role"})
	admissionWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kueue_admission_wait_time_seconds",
		Help:    "Time from a workload's queueing (creation, or its last requeue) to its admission.",
		Buckets: waitBuckets(16),
	}, []string{"cluster_queue", "priority_class", "replica_role"})
	lqQuotaReserved = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kueue_local_queue_quota_reserved_workloads_total",
		Help: "Workloads of the LocalQueue that got a quota reservation.",
	}, []string{"name", "namespace", "priority_class", "replica_role"})
	lqQuotaReservedWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kueue_local_queue_quota_reserved_wait_time_seconds",
		Help:    "Time from queueing to quota reservation, for the LocalQueue's workloads.",
		Buckets: waitBuckets(14),
	}, []string{"name", "namespace", "priority_class", "replica_role"})
	lqAdmittedTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kueue_local_queue_admitted_workloads_total",
		Help: "Workloads of the LocalQueue admitted.",
	}, []string{"name", "namespace", "priority_class", "replica_role"})
	lqAdmissionWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kueue_local_queue_admission_wait_time_seconds",
		Help:    "Time from queueing to admission, for the LocalQueue's workloads.",
		Buckets: waitBuckets(14),
	}, []string{"name", "namespace", "priority_class", "replica_role"})
	checksWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kueue_admission_checks_wait_time_seconds",
		Help:    "Time from a workload's quota reservation to its admission (every admission check Ready).",
		Buckets: waitBuckets(14),
	}, []string{"cluster_queue", "priority_class", "replica_role"})
	lqChecksWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kueue_local_queue_admission_checks_wait_time_seconds",
		Help:    "Time from quota reservation to admission, for the LocalQueue's workloads.",
		Buckets: waitBuckets(14),
	}, []string{"name", "namespace", "priority_class", "replica_role"})
	readyWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kueue_ready_wait_time_seconds",
		Help:    "Time from a workload's queueing (creation, or its last requeue) until its pods were ready.",
		Buckets: waitBuckets(14),
	}, []string{"cluster_queue", "priority_class", "replica_role"})
	admittedUntilReady = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kueue_admitted_until_ready_wait_time_seconds",
		Help:    "Time from a workload's admission until its pods were ready.",
		Buckets: waitBuckets(14),
	}, []string{"cluster_queue", "priority_class", "replica_role"})
	lqReadyWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kueue_local_queue_ready_wait_time_seconds",
		Help:    "Time from queueing until the pods were ready, for the LocalQueue's workloads.",
		Buckets: waitBuckets(14),
	}, []string{"name", "namespace", "priority_class", "replica_role"})
	lqAdmittedUntilReady = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kueue_local_queue_admitted_until_ready_wait_time_seconds",
		Help:    "Time from admission until the pods were ready, for the LocalQueue's workloads.",
		Buckets: waitBuckets(14),
	}, []string{"name", "namespace", "priority_class", "replica_role"})
	subtreeAdmittedTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kueue_cohort_subtree_admitted_workloads_total",
		Help: "Workloads admitted in the ClusterQueues of the cohort's subtree.",
	}, []string{"cohort", "priority_class", "replica_role"})
)

// Evictions, preemptions and finished workloads.
var (
	evicted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kueue_evicted_workloads_total",
		Help: "Workloads evicted from the ClusterQueue, by the Evicted condition's reason (Preempted, ClusterQueueStopped, LocalQueueStopped, Deactivated, ...) and underlying_cause (MaximumExecutionTimeExceeded for a deactivation by the execution time limit, else empty).",
	}, []string{"cluster_queue", "reason", "underlying_cause", "priority_class", "replica_role"})
	lqEvicted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kueue_local_queue_evicted_workloads_total",
		Help: "Workloads of the LocalQueue evicted, by reason and underlying_cause as kueue_evicted_workloads_total.",
	}, []string{"name", "namespace", "reason", "underlying_cause", "priority_class", "replica_role"})
	preempted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kueue_preempted_workloads_total",
		Help: "Workloads preempted, by the ClusterQueue of the workload they made room for and the preemption's reason (InClusterQueue, InCohortReclamation, InCohortFairSharing, InCohortReclaimWhileBorrowing).",
	}, []string{"preempting_cluster_queue", "reason", "replica_role"})
	finished = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kueue_finished_workloads_total",
		Help: "Workloads of the ClusterQueue that finished while holding their admission.",
	}, []string{"cluster_queue", "priority_class", "replica_role"})
	lqFinished = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kueue_local_queue_finished_workloads_total",
		Help: "Workloads of the LocalQueue that finished while holding their admission.",
	}, []string{"name", "namespace", "priority_class", "replica_role"})
)

func eventCollectors() []prometheus.Collector {
	return []prometheus.Collector{admissionAttempts, admissionAttemptDuration, quotaReserved, quotaReservedWait,
		admittedTotal, admissionWait, lqQuotaReserved, lqQuotaReservedWait, lqAdmittedTotal, lqAdmissionWait, subtreeAdmittedTotal, checksWait, lqChecksWait, readyWait, admittedUntilReady, lqReadyWait, lqAdmittedUntilReady,
		evicted, lqEvicted, preempted, finished, lqFinished}
}

func init() {
	ctrlmetrics.Registry.MustRegister(eventCollectors()...)
}

// Recorder counts the events of one manager under its replica role. A nil
// Recorder counts nothing.
type Recorder struct {
	role func() string
	// localQueue tells whether a LocalQueue (namespace, name) has
	// per-LocalQueue series; nil: none has.
	localQueue func(namespace, name string) bool
	// cohorts are a ClusterQueue's cohort and those above it; nil: none.
	cohorts func(clusterQueue string) []string
}

// NewRecorder counts under role; localQueue picks the LocalQueues with
// series of their own (nil: none); cohorts gives a ClusterQueue's cohort
// and those above it, whose subtree counts its admissions (nil: none).
func NewRecorder(role func() string, localQueue func(namespace, name string) bool, cohorts func(clusterQueue string) []string) *Recorder {
	return &Recorder{role: role, localQueue: localQueue, cohorts: cohorts}
}

// AdmissionAttempt counts one admission cycle.
func (r *Recorder) AdmissionAttempt(admittedAny bool, took time.Duration) {
	if r == nil {
		return
	}
	result := "inadmissible"
	if admittedAny {
		result = "success"
	}
	role := r.role()
	admissionAttempts.WithLabelValues(result, role).Inc()
	admissionAttemptDuration.WithLabelValues(result, role).Observe(took.Seconds())
}

// Admission is one workload's admission, as it landed.
type Admission struct {
	ClusterQueue, Namespace, LocalQueue, PriorityClass string
	// Waited is from its queueing to the event counted.
	Waited time.Duration
	// Checked: the ClusterQueue asks admission checks of the workload, so
	// its reservation is not yet its admission.
	Checked bool
}

// Admitted counts a quota reservation and, when the ClusterQueue asks no
// admission check of it (a.Checked is false), the admission it is at once.
func (r *Recorder) Admitted(a Admission) {
	if r == nil {
		return
	}
	role := r.role()
	waited := a.Waited.Seconds()
	quotaReserved.WithLabelValues(a.ClusterQueue, a.PriorityClass, role).Inc()
	quotaReservedWait.WithLabelValues(a.ClusterQueue, a.PriorityClass, role).Observe(waited)
	if r.localQueue != nil && r.localQueue(a.Namespace, a.LocalQueue) {
		lqQuotaReserved.WithLabelValues(a.LocalQueue, a.Namespace, a.PriorityClass, role).Inc()
		lqQuotaReservedWait.WithLabelValues(a.LocalQueue, a.Namespace, a.PriorityClass, role).Observe(waited)
	}
	if !a.Checked {
		r.ChecksPassed(a, 0)
	}
}

// ChecksPassed counts an admission: every admission check of a reserved
// workload is Ready (or it had none). a.Waited is from queueing to now;
// checksWaited from the reservation to now.
func (r *Recorder) ChecksPassed(a Admission, checksWaited time.Duration) {
	if r == nil {
		return
	}
	role := r.role()
	waited := a.Waited.Seconds()
	admittedTotal.WithLabelValues(a.ClusterQueue, a.PriorityClass, role).Inc()
	admissionWait.WithLabelValues(a.ClusterQueue, a.PriorityClass, role).Observe(waited)
	if a.Checked {
		checksWait.WithLabelValues(a.ClusterQueue, a.PriorityClass, role).Observe(checksWaited.Seconds())
	}
	if r.cohorts != nil {
		for _, cohort := range r.cohorts(a.ClusterQueue) {
			subtreeAdmittedTotal.WithLabelValues(cohort, a.PriorityClass, role).Inc()
		}
	}
	if r.localQueue == nil || !r.localQueue(a.Namespace, a.LocalQueue) {
		return
	}
	lqAdmittedTotal.WithLabelValues(a.LocalQueue, a.Namespace, a.PriorityClass, role).Inc()
	lqAdmissionWait.WithLabelValues(a.LocalQueue, a.Namespace, a.PriorityClass, role).Observe(waited)
	if a.Checked {
		lqChecksWait.WithLabelValues(a.LocalQueue, a.Namespace, a.PriorityClass, role).Observe(checksWaited.Seconds())
	}
}

// PodsReady counts a workload whose pods became ready for the first time
// in its admission: a.Waited is from its queueing, sinceAdmission from its
// admission.
func (r *Recorder) PodsReady(a Admission, sinceAdmission time.Duration) {
	if r == nil {
		return
	}
	role := r.role()
	readyWait.WithLabelValues(a.ClusterQueue, a.PriorityClass, role).Observe(a.Waited.Seconds())
	admittedUntilReady.WithLabelValues(a.ClusterQueue, a.PriorityClass, role).Observe(sinceAdmission.Seconds())
	if r.localQueue != nil && r.localQueue(a.Namespace, a.LocalQueue) {
		lqReadyWait.WithLabelValues(a.LocalQueue, a.Namespace, a.PriorityClass, role).Observe(a.Waited.Seconds())
		lqAdmittedUntilReady.WithLabelValues(a.LocalQueue, a.Namespace, a.PriorityClass, role).Observe(sinceAdmission.Seconds())
	}
}

// Workload names a workload's queues for its series.
type Workload struct {
	ClusterQueue, Namespace, LocalQueue, PriorityClass string
}

// maximumExecutionTime is sluice's Evicted reason for a workload whose
// execution time ran out; Kueue's series count it as a deactivation with
// this underlying cause.
const maximumExecutionTime = "MaximumExecutionTimeExceeded"

// Evicted counts an eviction with the Evicted condition's reason.
func (r *Recorder) Evicted(w Workload, reason string) {
	if r == nil {
		return
	}
	cause := ""
	if reason == maximumExecutionTime {
		reason, cause = "Deactivated", maximumExecutionTime
	} else if c, ok := strings.CutPrefix(reason, "DeactivatedDueTo"); ok {
		reason, cause = "Deactivated", c
	}
	role := r.role()
	evicted.WithLabelValues(w.ClusterQueue, reason, cause, w.PriorityClass, role).Inc()
	if r.localQueue != nil && r.localQueue(w.Namespace, w.LocalQueue) {
		lqEvicted.WithLabelValues(w.LocalQueue, w.Namespace, reason, cause, w.PriorityClass, role).Inc()
	}
}

// Preempted counts a preemption made for a workload of preemptingCQ.
func (r *Recorder) Preempted(preemptingCQ, reason string) {
	if r == nil {
		return
	}
	preempted.WithLabelValues(preemptingCQ, reason, r.role()).Inc()
}

// Finished counts a workload that finished while admitted.
func (r *Recorder) Finished(w Workload) {
	if r == nil {
		return
	}
	role := r.role()
	finished.WithLabelValues(w.ClusterQueue, w.PriorityClass, role).Inc()
	if r.localQueue != nil && r.localQueue(w.Namespace, w.LocalQueue) {
		lqFinished.WithLabelValues(w.LocalQueue, w.Namespace, w.PriorityClass, role).Inc()
	}
}
