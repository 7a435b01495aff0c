package metrics

import (
	"regexp"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// gauges is the one Collector on controller-runtime's registry; each
// manager built in the process points it at its own state.
var gauges = &Collector{}

func init() {
	ctrlmetrics.Registry.MustRegister(gauges)
}

// SetSource points the registered gauges at source (nil: only the build).
func SetSource(source func() State, build Build) { gauges.SetSource(source, build) }

// Names lists the series this package serves (histograms by their base
// name), for checks of what dashboards and docs refer to.
func Names() []string {
	ch := make(chan *prometheus.Desc, 64)
	go func() {
		gauges.Describe(ch)
		for _, c := range eventCollectors() {
			c.Describe(ch)
		}
		close(ch)
	}()
	var names []string
	for d := range ch {
		if m := fqName.FindStringSubmatch(d.String()); m != nil {
			names = append(names, m[1])
		}
	}
	return names
}

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)
