package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/bench"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// A short bench runs the whole instrument: its own control plane, the
// manager as a separate process, the finish mimic and the API ceiling's
// replay. It checks the report's structure and that every workload was
// admitted and finished; timings are the benchmark's business, not a test's.
func TestBenchSmoke(t *testing.T) {
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	generator := filepath.Join(root, "bench", "smoke.yaml")
	gen, err := bench.Load(generator)
	if err != nil {
		t.Fatal(err)
	}
	total := len(gen.Expand().Workloads)
	out := filepath.Join(t.TempDir(), "report.json")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, sluiceBin, "bench", "--generator", generator, "--assets", assetsDir, "--out", out, "--timeout", "8m")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("sluice bench failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	for _, want := range []string{"wall / packing bound", "admitted/s / API ceiling", "time to admission", "ClusterQueue usage"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, stdout.String())
		}
	}
	if !strings.Contains(stderr.String(), "created ") {
		t.Errorf("no progress line on stderr:\n%s", stderr.String())
	}

	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("the report is not JSON: %v\n%s", err, data)
	}
	for _, key := range bench.RequiredReportFields() {
		if _, ok := doc[key]; !ok {
			t.Errorf("the report lacks %q", key)
		}
	}
	var report bench.Report
	if err := json.Unmarshal(data, &report); err != nil {
		t.Fatal(err)
	}
	if report.Workloads != total || report.Admitted != total || report.Finished != total {
		t.Errorf("workloads %d, admitted %d, finished %d; want all %d", report.Workloads, report.Admitted, report.Finished, total)
	}
	for _, class := range []string{"small", "medium", "large"} {
		if report.Classes[class].Count == 0 {
			t.Errorf("no time to admission for class %s: %+v", class, report.Classes)
		}
	}
	if u, ok := report.ClusterQueueClasses["cq"]; !ok || u.Queues != 4 || u.MeanUsagePercent <= 0 {
		t.Errorf("ClusterQueue class cq = %+v, want 4 queues with some usage", u)
	}
	positive := map[string]float64{
		"wallSeconds": report.WallSeconds, "packingBoundSeconds": report.PackingBoundSeconds,
		"apiCeilingPerSecond": report.APICeilingPerSecond, "admittedPerSecond": report.AdmittedPerSecond,
		"writesPerAdmission": report.WritesPerAdmission, "managerCPUSeconds": report.ManagerCPUSeconds,
		"managerPeakRSSBytes": float64(report.ManagerPeakRSSBytes), "cycles": float64(report.Cycles),
	}
	for name, v := range positive {
		if v <= 0 {
			t.Errorf("%s = %v, want a measurement", name, v)
		}
	}
}

// A short MultiKueue bench runs its whole instrument: three control planes
// with a manager process each, Jobs dispatched to the workers, the
// ceiling's replay. It checks that every Job ran and the report's
// structure; timings are the benchmark's business.
func TestMultiKueueBenchSmoke(t *testing.T) {
	generator := filepath.Join(t.TempDir(), "multikueue-smoke.yaml")
	if err := os.WriteFile(generator, []byte("multikueue: {jobs: 20, creators: 4, workers: 2, podsPerJob: 1}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "report.json")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, sluiceBin, "bench", "--generator", generator, "--assets", assetsDir, "--out", out, "--timeout", "5m")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("sluice bench failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	for _, want := range []string{"dispatch rate", "API ceiling", "created to running", "writes per Job"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, stdout.String())
		}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var report bench.MultiKueueReport
	if err := json.Unmarshal(data, &report); err != nil {
		t.Fatalf("the report is not JSON: %v\n%s", err, data)
	}
	if report.Dispatched != 20 || report.CreatedToRunning.Count != 20 || report.APICeilingPerSecond <= 0 || report.ManagerWritesPerJob <= 0 {
		t.Fatalf("report: dispatched %d, running %d, ceiling %.1f, manager writes/Job %.2f", report.Dispatched,
			report.CreatedToRunning.Count, report.APICeilingPerSecond, report.ManagerWritesPerJob)
	}
}
