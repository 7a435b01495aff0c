package metrics

import ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

// gauges is the one Collector on controller-runtime's registry; each
// manager built in the process points it at its own state.
var gauges = &Collector{}

func init() {
	ctrlmetrics.Registry.MustRegister(gauges)
}

// SetSource points the registered gauges at source (nil: only the build).
func SetSource(source func() State, build Build) { gauges.SetSource(source, build) }
