package bench

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// writeRunnerOutput writes what Kueue's runner and the adapter leave in a
// run's folder.
func writeRunnerOutput(t *testing.T, dir, manager string, adapter adapterReport) {
	t.Helper()
	files := map[string]string{
		"summary.yaml": `clusterQueueClasses:
  cq:
    cpuUsed: 3000000000
    cpuAverageUsage: 1000
    nominalQuota: 120000
droppedWorkloadEvents: 2
workloadClasses:
  small:
    averageTimeToAdmissionMs: 1500
    count: 3
`,
		manager + ".stats.yaml": "wallMs: 400500\nuserMs: 1\nsysMs: 1\nmaxrss: 1\n",
		"wlStates.csv": `id,class name,namespace,name,ms to admitted,ms to finish,num evictions
0,small,ns,a,1000,1200,0
1,small,ns,b,2000,2300,1
2,small,ns,c,1500,1700,0
3,large,ns,d,4000,5000,2
`,
	}
	raw, err := json.Marshal(adapter)
	if err != nil {
		t.Fatal(err)
	}
	files[adapterReportFile] = string(raw)
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReadRunnerResults(t *testing.T) {
	dir := t.TempDir()
	writeRunnerOutput(t, dir, "sluice", adapterReport{
		CPUSeconds: 12.5, PeakRSSBytes: 100 << 20,
		ClientRequests: map[string]float64{"GET 200": 500, "LIST 200": 9, "PATCH 200": 10, "PATCH 409": 2, "POST 201": 3, "PUT 200": 4},
		APIWrites: writeCounts{
			"POST workloads.kueue.x-k8s.io":             4,  // the runner's creations
			"POST clusterqueues.kueue.x-k8s.io":         1,  // the runner's
			"PUT workloads.kueue.x-k8s.io/status":       4,  // the runner's finishes
			"PUT workloads.kueue.x-k8s.io/status 409":   3,  // the runner's, refused
			"PATCH workloads.kueue.x-k8s.io/status":     10, // the manager's
			"PATCH workloads.kueue.x-k8s.io/status 409": 2,
			"PUT clusterqueues.kueue.x-k8s.io/status":   4, // the manager's
			"POST events": 3, // the manager's
		},
	})
	side, err := readRunnerResults(dir, "sluice")
	if err != nil {
		t.Fatal(err)
	}
	if side.WallSeconds != 400.5 || side.ManagerCPUSeconds != 12.5 || side.ManagerPeakRSSBytes != 100<<20 {
		t.Fatalf("wall %v, CPU %v, RSS %v", side.WallSeconds, side.ManagerCPUSeconds, side.ManagerPeakRSSBytes)
	}
	if side.Workloads != 4 || side.Evictions != 3 || side.Admissions != 7 {
		t.Fatalf("workloads %d, evictions %d, admissions %d; want 4, 3, 7 (each eviction is one more admission)", side.Workloads, side.Evictions, side.Admissions)
	}
	small := side.Classes["small"]
	if small.Count != 3 || small.MeanSeconds != 1.5 || small.P50Seconds != 1.5 || small.P99Seconds != 2 || small.Evictions != 1 {
		t.Fatalf("small class %+v", *small)
	}
	// Writes: PATCH 12 + POST 3 + PUT 4 = 19 (reads are not writes). Of
	// them, 4 CQ status and 3 events are not Workload writes.
	if side.Writes != 19 || side.WorkloadWrites != 12 {
		t.Fatalf("writes %v, Workload writes %v; want 19 and 12", side.Writes, side.WorkloadWrites)
	}
	if side.WorkloadWritesPerAdmission != 12.0/7 {
		t.Fatalf("per admission %v", side.WorkloadWritesPerAdmission)
	}
	if side.RunnerConflicts != 3 {
		t.Fatalf("runner conflicts %v, want the API server's 5 less the manager's 2", side.RunnerConflicts)
	}
	if side.QuotaHeldCPUSeconds != 3000 || side.DroppedWorkloadEvents != 2 {
		t.Fatalf("quota held %v, dropped %v", side.QuotaHeldCPUSeconds, side.DroppedWorkloadEvents)
	}

	report := &VsKueueReport{KueueVersion: "v0.17.0", Generator: "bench/baseline.yaml", Kueue: side, Sluice: side}
	var out bytes.Buffer
	if err := report.PrintTable(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"v0.17.0", "wall (s)", "400.5", "1.00x", "time to admission mean, small (s)", "runner's writes refused (409)"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("table lacks %q:\n%s", want, out.String())
		}
	}
	path := filepath.Join(t.TempDir(), "report.json")
	if err := report.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	var back map[string]json.RawMessage
	raw, _ := os.ReadFile(path)
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	var sluice map[string]any
	if err := json.Unmarshal(back["sluice"], &sluice); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"wallSeconds", "classes", "evictions", "managerCPUSeconds", "managerPeakRSSBytes", "writes", "runnerConflicts"} {
		if _, ok := sluice[key]; !ok {
			t.Fatalf("the JSON's sluice object lacks %q", key)
		}
	}
}

func TestReadRunnerResultsNamesWhatIsMissing(t *testing.T) {
	dir := t.TempDir()
	writeRunnerOutput(t, dir, "kueue", adapterReport{})
	if err := os.WriteFile(filepath.Join(dir, "wlStates.csv"), []byte("id,class name\n0,small\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := readRunnerResults(dir, "kueue")
	if err == nil || !strings.Contains(err.Error(), `no column "ms to admitted"`) {
		t.Fatalf("err = %v, want one naming the missing column", err)
	}
	if _, err := readRunnerResults(t.TempDir(), "kueue"); err == nil || !strings.Contains(err.Error(), "summary.yaml") {
		t.Fatalf("err = %v, want one naming summary.yaml", err)
	}
}

func TestAdapterMapsTheRunnersLaunchContract(t *testing.T) {
	ra, err := parseRunnerArgs([]string{"--kubeconfig", "/out/kubeconfig", "--zap-log-level=3", "--metricsPort", "9090", "--cpuprofile", "/out/x.prof"})
	if err != nil {
		t.Fatal(err)
	}
	if ra.kubeconfig != "/out/kubeconfig" || ra.logLevel != "3" || ra.metricsPort != 9090 {
		t.Fatalf("parsed %+v", ra)
	}
	args, health, err := managerCommandLine(ManagerKueue, ra, 9090)
	if err != nil || health != "" || !reflect.DeepEqual(args, []string{"--kubeconfig", "/out/kubeconfig", "--metricsPort", "9090", "--zap-log-level=3"}) {
		t.Fatalf("kueue: %v %q %v", args, health, err)
	}
	args, health, err = managerCommandLine(ManagerSluice, ra, 9090)
	if err != nil || !strings.HasSuffix(health, "/readyz") {
		t.Fatalf("sluice: %v %q %v", args, health, err)
	}
	joined := strings.Join(args, " ")
	for _, want := range []string{"manager --kubeconfig /out/kubeconfig", "--webhooks=false", "--leader-elect=false", "--metrics-bind-address 127.0.0.1:9090", "--zap-log-level=3"} {
		if !strings.Contains(joined, want) {
			t.Fatalf("sluice's command line %q lacks %q", joined, want)
		}
	}
	if _, err := parseRunnerArgs([]string{"--zap-log-level=2"}); err == nil || !strings.Contains(err.Error(), "--kubeconfig") {
		t.Fatalf("err = %v, want one naming --kubeconfig", err)
	}
	if _, _, err := managerCommandLine("volcano", ra, 1); err == nil || !strings.Contains(err.Error(), "--manager") {
		t.Fatalf("err = %v, want one naming --manager", err)
	}
}
