package controller

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metric names the benchmark and dashboards read.
const (
	MetricCycleDuration = "sluice_admission_cycle_duration_seconds"
	MetricSlowestCycle  = "sluice_admission_cycle_slowest_seconds"
	MetricAdmitted      = "sluice_admitted_workloads_total"
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
	slowestMu   sync.Mutex
	slowestSeen time.Duration
)

func init() {
	ctrlmetrics.Registry.MustRegister(cycleDuration, slowestCycle, admittedWorkloads)
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
