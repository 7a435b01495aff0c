package config_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/apply"
	"github.com/sluicehq/sluice/internal/metrics"
)

// The Grafana dashboard queries only series the manager serves: every
// kueue_* and sluice_* name in its expressions (histograms by their
// _bucket, _sum and _count) is one sluice defines.
func TestGrafanaDashboardUsesServedSeries(t *testing.T) {
	data, err := os.ReadFile("grafana/sluice-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dashboard struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &dashboard); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	served := append(metrics.Names(), apply.MetricCycleDuration, apply.MetricSlowestCycle, apply.MetricAdmitted, apply.MetricWrites)
	for _, want := range []string{"kueue_pending_workloads", "kueue_admission_wait_time_seconds", "kueue_evicted_workloads_total"} {
		if !slices.Contains(served, want) {
			t.Fatalf("metrics.Names() lacks %s: %v", want, served)
		}
	}
	name := regexp.MustCompile(`\b(?:kueue|sluice)_[a-z_]+`)
	queries := 0
	for _, p := range dashboard.Panels {
		for _, target := range p.Targets {
			queries++
			for _, n := range name.FindAllString(target.Expr, -1) {
				base := n
				for _, suffix := range []string{"_bucket", "_sum", "_count"} {
					base = strings.TrimSuffix(base, suffix)
				}
				if !slices.Contains(served, base) {
					t.Errorf("panel %q queries %s, which sluice does not serve", p.Title, n)
				}
			}
		}
	}
	if queries < 10 {
		t.Errorf("%d queries: the dashboard lost its panels", queries)
	}
}
