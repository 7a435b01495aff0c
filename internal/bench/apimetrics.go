package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"

	"github.com/sluicehq/sluice/internal/apply"
)

// writeVerbs are the apiserver_request_total verbs that change state.
var writeVerbs = map[string]bool{"POST": true, "PUT": true, "PATCH": true, "APPLY": true, "DELETE": true, "DELETECOLLECTION": true}

// writeCounts are API writes by "VERB resource[.group][/subresource]".
type writeCounts map[string]float64

func writeKey(verb, resource, group, subresource string) string {
	key := verb + " " + resource
	if group != "" {
		key += "." + group
	}
	if subresource != "" {
		key += "/" + subresource
	}
	return key
}

// workloadWrites counts the writes to Workloads and their status.
func workloadWrites(c writeCounts) float64 {
	var n float64
	for key, v := range c {
		fields := strings.Fields(key)
		if target := fields[1]; target == "workloads.kueue.x-k8s.io" || target == "workloads.kueue.x-k8s.io/status" {
			n += v
		}
	}
	return n
}

// minus is c - before, dropping keys that did not change.
func (c writeCounts) minus(before writeCounts) writeCounts {
	out := writeCounts{}
	for k, v := range c {
		if d := v - before[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

// scrapeAPIWrites reads the API server's own count of write requests.
func scrapeAPIWrites(ctx context.Context, cs kubernetes.Interface) (writeCounts, error) {
	raw, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the API server's metrics: %w", err)
	}
	families, err := parseMetrics(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("parsing the API server's metrics: %w", err)
	}
	return apiWrites(families["apiserver_request_total"]), nil
}

func apiWrites(family *dto.MetricFamily) writeCounts {
	out := writeCounts{}
	if family == nil {
		return out
	}
	for _, m := range family.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if !writeVerbs[labels["verb"]] {
			continue
		}
		key := writeKey(labels["verb"], labels["resource"], labels["group"], labels["subresource"])
		if code := labels["code"]; code != "" && !strings.HasPrefix(code, "2") {
			key += " " + code // conflicts and failures are writes too, and worth seeing
		}
		out[key] += m.GetCounter().GetValue()
	}
	return out
}

// cycleStats are the manager's admission cycle metrics.
type cycleStats struct {
	Cycles         uint64
	Over100ms      uint64
	SlowestSeconds float64
	Admitted       float64
	// Writes are the manager's own count of its status writes, by
	// "write result" (sluice_status_writes_total).
	Writes map[string]float64
}

// scrapeCycles reads the manager's cycle metrics from its metrics endpoint.
func scrapeCycles(ctx context.Context, url string) (cycleStats, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return cycleStats{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return cycleStats{}, fmt.Errorf("reading the manager's metrics: %w", err)
	}
	defer resp.Body.Close()
	families, err := parseMetrics(resp.Body)
	if err != nil {
		return cycleStats{}, fmt.Errorf("parsing the manager's metrics: %w", err)
	}
	return cyclesFrom(families), nil
}

func cyclesFrom(families map[string]*dto.MetricFamily) cycleStats {
	var s cycleStats
	if f := families[apply.MetricCycleDuration]; f != nil && len(f.GetMetric()) > 0 {
		h := f.GetMetric()[0].GetHistogram()
		s.Cycles = h.GetSampleCount()
		s.Over100ms = s.Cycles
		for _, b := range h.GetBucket() {
			if math.Abs(b.GetUpperBound()-0.1) < 1e-9 {
				s.Over100ms = s.Cycles - b.GetCumulativeCount()
			}
		}
	}
	if f := families[apply.MetricSlowestCycle]; f != nil && len(f.GetMetric()) > 0 {
		s.SlowestSeconds = f.GetMetric()[0].GetGauge().GetValue()
	}
	if f := families[apply.MetricAdmitted]; f != nil && len(f.GetMetric()) > 0 {
		s.Admitted = f.GetMetric()[0].GetCounter().GetValue()
	}
	if f := families[apply.MetricWrites]; f != nil {
		s.Writes = map[string]float64{}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			s.Writes[labels["write"]+" "+labels["result"]] += m.GetCounter().GetValue()
		}
	}
	return s
}

func parseMetrics(r io.Reader) (map[string]*dto.MetricFamily, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(r)
}
