package apply

import (
	"errors"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metric names the benchmark and dashboards read.
const (
	MetricCycleDuration = "sluice_admission_cycle_duration_seconds"
	MetricSlowestCycle  = "sluice_admission_cycle_slowest_seconds"
	MetricAdmitted      = "sluice_admitted_workloads_total"
	MetricWrites        = "sluice_status_writes_total"
)

var (
	cycleDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    MetricCycleDuration,
		Help:    "Time one admission cycle takes, from the snapshot to the decisions (not the writes).",
		Buckets: []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5},
	})
	slowestCycle = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: MetricSlowestCycle,
		Help: "The slowest admission cycle since this manager started admitting.",
	})
	admittedWorkloads = prometheus.NewCounter(prometheus.CounterOpts{
		Name: MetricAdmitted,
		Help: "Workloads admitted by this manager (decisions; a failed write gives the admission back).",
	})
	writesTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricWrites,
		Help: "Status writes (and the reads that settle an unknown outcome) by what was written and how it went: ok, conflict, not_found, refused (another 4xx), error (no answer, or 5xx), skipped (the object already said it), fenced (the lease was not surely held).",
	}, []string{"write", "result"})
	slowestMu   sync.Mutex
	slowestSeen time.Duration
)

func init() {
	ctrlmetrics.Registry.MustRegister(cycleDuration, slowestCycle, admittedWorkloads, writesTotal)
}

// observeCycle records one admission cycle's duration.
func observeCycle(d time.Duration) {
	cycleDuration.Observe(d.Seconds())
	slowestMu.Lock()
	defer slowestMu.Unlock()
	if d > slowestSeen {
		slowestSeen = d
		slowestCycle.Set(d.Seconds())
	}
}

// errSkipped stands for a write not made because the object said it already.
var errSkipped = errors.New("skipped")

// countWrite counts a write by its outcome.
func countWrite(kind string, err error) {
	writesTotal.WithLabelValues(kind, writeResult(err)).Inc()
}

func writeResult(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, errSkipped):
		return "skipped"
	case apierrors.IsConflict(err):
		return "conflict"
	case apierrors.IsNotFound(err):
		return "not_found"
	case refusedByAPI(err):
		return "refused"
	}
	return "error"
}
