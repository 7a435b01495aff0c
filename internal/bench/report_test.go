package bench

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestBuildReport(t *testing.T) {
	plan := &Plan{
		Queues: []PlannedQueue{
			{Name: "c-0-cq-0", Class: "cq", Cohort: "c-0", NominalMilliCPU: 2000},
			{Name: "c-0-cq-1", Class: "cq", Cohort: "c-0", NominalMilliCPU: 2000},
		},
		Workloads: []PlannedWorkload{
			{Name: "a", Queue: "c-0-cq-0", Class: "small", RequestMilliCPU: 1000, Runtime: 2 * time.Second},
			{Name: "b", Queue: "c-0-cq-0", Class: "small", RequestMilliCPU: 1000, Runtime: 2 * time.Second},
			{Name: "c", Queue: "c-0-cq-1", Class: "large", RequestMilliCPU: 4000, Runtime: 2 * time.Second},
		},
	}
	start := time.Unix(5000, 0)
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	runs := []workloadRun{
		{requestedAt: at(0), admittedAt: at(1), finishedAt: at(3.1), finishLag: 100 * time.Millisecond, inUse: []span{{at(1), at(3.1)}}},
		{requestedAt: at(0), admittedAt: at(3), finishedAt: at(5.3), finishLag: 300 * time.Millisecond, inUse: []span{{at(3), at(5.3)}}},
		{requestedAt: at(0), admittedAt: at(4), finishedAt: at(10), finishLag: 0, evictions: 1, inUse: []span{{at(4), at(6)}, {at(8), at(10)}}},
	}
	r := buildReport(observations{
		scenario: "test", plan: plan, runs: runs, start: start, end: at(10), ceilingPerSecond: 3,
		managerWrites: writeCounts{"PATCH workloads.kueue.x-k8s.io/status": 4, "PATCH workloads.kueue.x-k8s.io/status 409": 2, "PATCH clusterqueues.kueue.x-k8s.io/status": 9},
		usage:         managerUsage{CPU: 1500 * time.Millisecond, PeakRSS: 64 << 20},
		cycles:        cycleStats{Cycles: 10, Over100ms: 1, SlowestSeconds: 0.2},
	})
	checks := []struct {
		name      string
		got, want float64
	}{
		{"workloads", float64(r.Workloads), 3},
		{"admitted", float64(r.Admitted), 3},
		{"finished", float64(r.Finished), 3},
		{"evictions", float64(r.Evictions), 1},
		{"wall", r.WallSeconds, 10},
		{"packing bound", r.PackingBoundSeconds, 3}, // (2+2+8) CPU-s over 4 CPU
		{"wall over bound", r.WallOverBound, 10.0 / 3},
		{"admitted per second", r.AdmittedPerSecond, 0.75}, // 3 by the last admission at 4 s
		{"peak per second", r.PeakAdmittedPerSecond, 0.6},
		{"over ceiling", r.AdmittedOverCeiling, 0.25},
		{"API floor", r.APIFloorSeconds, 1.5},
		{"writes per admission", r.WritesPerAdmission, 2}, // 4 + 2 conflicts over 3
		{"finish lag mean", r.FinishLagMeanSeconds, 0.4 / 3},
		{"finish lag p99", r.FinishLagP99Seconds, 0.3},
		{"small mean", r.Classes["small"].MeanSeconds, 2},
		{"large max", r.Classes["large"].MaxSeconds, 4},
		// 1 CPU x 2.1 s + 1 CPU x 2.3 s + 4 CPU x 4 s over 4 CPU x 10 s
		{"queue usage", r.ClusterQueueClasses["cq"].MeanUsagePercent, 100 * 20.4 / 40},
		{"cpu", r.ManagerCPUSeconds, 1.5},
	}
	for _, c := range checks {
		if diff := c.got - c.want; diff > 1e-9 || diff < -1e-9 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}

	var table bytes.Buffer
	if err := r.PrintTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"wall / packing bound", "10.0 s / 3.0 s = 3.33x", "admitted/s / API ceiling", "= 25%", "small", "large", "PATCH clusterqueues.kueue.x-k8s.io/status"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	if strings.Contains(table.String(), "%!") {
		t.Errorf("table has a formatting error:\n%s", table.String())
	}
}

// TestReportJSONNames pins the names tools and dashboards read.
func TestReportJSONNames(t *testing.T) {
	data, err := json.Marshal(&Report{Classes: map[string]Latency{"small": {}}, ClusterQueueClasses: map[string]QueueUsage{"cq": {}}})
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	for _, key := range RequiredReportFields() {
		if _, ok := doc[key]; !ok {
			t.Errorf("report JSON lacks %q", key)
		}
	}
	class := doc["classes"].(map[string]any)["small"].(map[string]any)
	for _, key := range []string{"meanSeconds", "p50Seconds", "p90Seconds", "p99Seconds", "maxSeconds"} {
		if _, ok := class[key]; !ok {
			t.Errorf("class latency lacks %q", key)
		}
	}
	if _, ok := doc["clusterQueueClasses"].(map[string]any)["cq"].(map[string]any)["meanUsagePercent"]; !ok {
		t.Error("clusterQueueClasses lacks meanUsagePercent")
	}
}
