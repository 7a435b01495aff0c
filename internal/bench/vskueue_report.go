package bench

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/yaml"
)

const adapterReportFile = "adapter.json"

// VsKueueReport is one `sluice bench-vs-kueue` run: the same scenario under
// Kueue's runner with each manager.
type VsKueueReport struct {
	KueueVersion string       `json:"kueueVersion"`
	Generator    string       `json:"generator"`
	RunnerQPS    float64      `json:"runnerQPS,omitempty"`
	RunnerBurst  int          `json:"runnerBurst,omitempty"`
	Kueue        *VsKueueSide `json:"kueue,omitempty"`
	Sluice       *VsKueueSide `json:"sluice,omitempty"`
}

// VsKueueSide is what one manager did under Kueue's runner.
type VsKueueSide struct {
	// Reused: read from an earlier run's folder, not measured in this one.
	Reused bool `json:"reused,omitempty"`
	// WallSeconds is the manager's run as the runner timed it: from its
	// start until every queue was empty and idle (<exe>.stats.yaml).
	WallSeconds float64                 `json:"wallSeconds"`
	Classes     map[string]*ClassResult `json:"classes"`
	Workloads   int                     `json:"workloads"`
	// Evictions are the runner's count of Evicted=True transitions.
	Evictions int `json:"evictions"`
	// Admissions are the workloads admitted plus their re-admissions
	// (one per eviction).
	Admissions          int     `json:"admissions"`
	ManagerCPUSeconds   float64 `json:"managerCPUSeconds"`
	ManagerPeakRSSBytes int64   `json:"managerPeakRSSBytes"`
	// Writes are all the manager's write requests (POST, PUT, PATCH,
	// DELETE; refused ones included), from its client's own count.
	Writes                float64            `json:"writes"`
	WritesByMethodAndCode map[string]float64 `json:"writesByMethodAndCode"`
	// WorkloadWrites are Writes less the manager's writes to queues,
	// flavors and events, which the API server counts by resource.
	WorkloadWrites             float64 `json:"workloadWrites"`
	WorkloadWritesPerAdmission float64 `json:"workloadWritesPerAdmission"`
	// RunnerConflicts are the runner's writes refused with a conflict: the
	// API server's 409s less the manager's own.
	RunnerConflicts float64 `json:"runnerConflicts"`
	// QuotaHeldCPUSeconds is the runner's cpuUsed over every queue: CPU
	// held by admitted workloads, integrated over time.
	QuotaHeldCPUSeconds   float64     `json:"quotaHeldCPUSeconds"`
	DroppedWorkloadEvents uint64      `json:"droppedWorkloadEvents"`
	APIWrites             writeCounts `json:"apiServerWrites"`
}

// ClassResult is one workload class's time to admission.
type ClassResult struct {
	Count       int     `json:"count"`
	MeanSeconds float64 `json:"meanSeconds"`
	P50Seconds  float64 `json:"p50Seconds"`
	P99Seconds  float64 `json:"p99Seconds"`
	Evictions   int     `json:"evictions"`
}

// runnerSummary is the part of the runner's summary.yaml read here.
type runnerSummary struct {
	ClusterQueueClasses map[string]struct {
		CPUUsed int64 `json:"cpuUsed"` // mCPU x ms
	} `json:"clusterQueueClasses"`
	DroppedWorkloadEvents uint64 `json:"droppedWorkloadEvents"`
}

// runnerCmdStats is the runner's <exe>.stats.yaml.
type runnerCmdStats struct {
	WallMs int64 `json:"wallMs"`
}

// readRunnerResults reads a finished run's folder.
func readRunnerResults(dir, manager string) (*VsKueueSide, error) {
	var summary runnerSummary
	if err := readYAML(filepath.Join(dir, "summary.yaml"), &summary); err != nil {
		return nil, err
	}
	var cmdStats runnerCmdStats
	if err := readYAML(filepath.Join(dir, manager+".stats.yaml"), &cmdStats); err != nil {
		return nil, err
	}
	var adapter adapterReport
	raw, err := os.ReadFile(filepath.Join(dir, adapterReportFile))
	if err != nil {
		return nil, fmt.Errorf("the adapter's report: %w", err)
	}
	if err := json.Unmarshal(raw, &adapter); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", filepath.Join(dir, adapterReportFile), err)
	}
	wls, err := readWorkloadStates(filepath.Join(dir, "wlStates.csv"))
	if err != nil {
		return nil, err
	}
	side := &VsKueueSide{
		WallSeconds:           float64(cmdStats.WallMs) / 1000,
		ManagerCPUSeconds:     adapter.CPUSeconds,
		ManagerPeakRSSBytes:   adapter.PeakRSSBytes,
		DroppedWorkloadEvents: summary.DroppedWorkloadEvents,
		APIWrites:             adapter.APIWrites,
	}
	for _, cq := range summary.ClusterQueueClasses {
		side.QuotaHeldCPUSeconds += float64(cq.CPUUsed) / 1e6
	}
	side.addWorkloads(wls)
	side.addWrites(adapter)
	return side, nil
}

func readYAML(path string, into any) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("the runner's output: %w", err)
	}
	if err := yaml.Unmarshal(raw, into); err != nil {
		return fmt.Errorf("parsing %s: %w", path, err)
	}
	return nil
}

// workloadState is a row of the runner's wlStates.csv.
type workloadState struct {
	class          string
	msToAdmitted   int64
	msToFinished   int64
	evictionsCount int
}

func readWorkloadStates(path string) ([]workloadState, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("the runner's output: %w", err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s is empty", path)
	}
	column := map[string]int{}
	for i, name := range rows[0] {
		column[name] = i
	}
	for _, name := range []string{"class name", "ms to admitted", "ms to finish", "num evictions"} {
		if _, ok := column[name]; !ok {
			return nil, fmt.Errorf("%s has no column %q (columns: %v)", path, name, rows[0])
		}
	}
	out := make([]workloadState, 0, len(rows)-1)
	for n, row := range rows[1:] {
		var s workloadState
		var errs [3]error
		s.class = row[column["class name"]]
		s.msToAdmitted, errs[0] = strconv.ParseInt(row[column["ms to admitted"]], 10, 64)
		s.msToFinished, errs[1] = strconv.ParseInt(row[column["ms to finish"]], 10, 64)
		s.evictionsCount, errs[2] = strconv.Atoi(row[column["num evictions"]])
		for _, err := range errs {
			if err != nil {
				return nil, fmt.Errorf("%s row %d: %w", path, n+2, err)
			}
		}
		out = append(out, s)
	}
	return out, nil
}

func (s *VsKueueSide) addWorkloads(wls []workloadState) {
	byClass := map[string][]float64{}
	s.Classes = map[string]*ClassResult{}
	for _, w := range wls {
		c := s.Classes[w.class]
		if c == nil {
			c = &ClassResult{}
			s.Classes[w.class] = c
		}
		c.Count++
		c.Evictions += w.evictionsCount
		s.Workloads++
		s.Evictions += w.evictionsCount
		if w.msToAdmitted > 0 || w.msToFinished > 0 {
			s.Admissions++
		}
		s.Admissions += w.evictionsCount
		byClass[w.class] = append(byClass[w.class], float64(w.msToAdmitted)/1000)
	}
	for class, waits := range byClass {
		sort.Float64s(waits)
		c := s.Classes[class]
		var sum float64
		for _, w := range waits {
			sum += w
		}
		c.MeanSeconds = sum / float64(len(waits))
		c.P50Seconds = quantile(waits, 0.5)
		c.P99Seconds = quantile(waits, 0.99)
	}
}

// quantile of sorted values, nearest rank.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(i, 0)]
}

// managerOnlyResources are the API server's write targets that only a
// manager writes under the runner (the runner creates queues and flavors
// but never updates them): what is left of the manager's writes are its
// Workload writes.
var managerOnlyResources = map[string]bool{
	"clusterqueues.kueue.x-k8s.io": true, "clusterqueues.kueue.x-k8s.io/status": true,
	"localqueues.kueue.x-k8s.io": true, "localqueues.kueue.x-k8s.io/status": true,
	"cohorts.kueue.x-k8s.io": true, "cohorts.kueue.x-k8s.io/status": true,
	"resourceflavors.kueue.x-k8s.io": true,
	"events":                         true, "events.events.k8s.io": true,
}

func (s *VsKueueSide) addWrites(a adapterReport) {
	s.WritesByMethodAndCode = map[string]float64{}
	var managerConflicts float64
	for key, n := range a.ClientRequests {
		method, code, _ := strings.Cut(key, " ")
		if !writeVerbs[method] {
			continue
		}
		s.Writes += n
		s.WritesByMethodAndCode[key] += n
		if code == "409" {
			managerConflicts += n
		}
	}
	var nonWorkload, apiConflicts float64
	for key, n := range a.APIWrites {
		fields := strings.Fields(key)
		if len(fields) == 3 && fields[2] == "409" {
			apiConflicts += n
		}
		if managerOnlyResources[fields[1]] && (fields[0] != "POST" || strings.HasPrefix(fields[1], "events")) {
			nonWorkload += n
		}
	}
	s.WorkloadWrites = max(s.Writes-nonWorkload, 0)
	if s.Admissions > 0 {
		s.WorkloadWritesPerAdmission = s.WorkloadWrites / float64(s.Admissions)
	}
	s.RunnerConflicts = max(apiConflicts-managerConflicts, 0)
}

// WriteJSON writes the report to path.
func (r *VsKueueReport) WriteJSON(path string) error {
	raw, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(raw, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// PrintTable prints the two runs side by side, with sluice/Kueue ratios.
func (r *VsKueueReport) PrintTable(out io.Writer) error {
	fmt.Fprintf(out, "Kueue's scheduler benchmark (runner and minimalkueue from sigs.k8s.io/kueue %s), %s", r.KueueVersion, r.Generator)
	if r.RunnerQPS > 0 || r.RunnerBurst > 0 {
		fmt.Fprintf(out, ", runner client qps %g burst %d", r.RunnerQPS, r.RunnerBurst)
	}
	fmt.Fprintln(out)
	for _, side := range []struct {
		name string
		s    *VsKueueSide
	}{{"Kueue", r.Kueue}, {"sluice", r.Sluice}} {
		if side.s != nil && side.s.Reused {
			fmt.Fprintf(out, "(%s: an earlier run's output, reused)\n", side.name)
		}
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tKueue\tsluice\tsluice/Kueue\t")
	row := func(name string, value func(*VsKueueSide) float64, format string) {
		var k, s = math.NaN(), math.NaN()
		cell := func(side *VsKueueSide, v *float64) string {
			if side == nil {
				return "-"
			}
			*v = value(side)
			return fmt.Sprintf(format, *v)
		}
		kc, sc := cell(r.Kueue, &k), cell(r.Sluice, &s)
		ratio := "-"
		if !math.IsNaN(k) && !math.IsNaN(s) && k != 0 {
			ratio = fmt.Sprintf("%.2fx", s/k)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", name, kc, sc, ratio)
	}
	row("wall (s)", func(s *VsKueueSide) float64 { return s.WallSeconds }, "%.1f")
	for _, class := range r.classes() {
		for _, q := range []struct {
			name string
			get  func(*ClassResult) float64
		}{{"mean", func(c *ClassResult) float64 { return c.MeanSeconds }},
			{"p50", func(c *ClassResult) float64 { return c.P50Seconds }},
			{"p99", func(c *ClassResult) float64 { return c.P99Seconds }}} {
			row(fmt.Sprintf("time to admission %s, %s (s)", q.name, class), func(s *VsKueueSide) float64 {
				if c := s.Classes[class]; c != nil {
					return q.get(c)
				}
				return math.NaN()
			}, "%.2f")
		}
	}
	row("evictions", func(s *VsKueueSide) float64 { return float64(s.Evictions) }, "%.0f")
	row("manager CPU (s)", func(s *VsKueueSide) float64 { return s.ManagerCPUSeconds }, "%.1f")
	row("manager peak RSS (MiB)", func(s *VsKueueSide) float64 { return float64(s.ManagerPeakRSSBytes) / (1 << 20) }, "%.0f")
	row("manager writes", func(s *VsKueueSide) float64 { return s.Writes }, "%.0f")
	row("  of which Workload writes", func(s *VsKueueSide) float64 { return s.WorkloadWrites }, "%.0f")
	row("Workload writes per admission", func(s *VsKueueSide) float64 { return s.WorkloadWritesPerAdmission }, "%.2f")
	row("runner's writes refused (409)", func(s *VsKueueSide) float64 { return s.RunnerConflicts }, "%.0f")
	row("quota held (CPU-s)", func(s *VsKueueSide) float64 { return s.QuotaHeldCPUSeconds }, "%.0f")
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, side := range []struct {
		name string
		s    *VsKueueSide
	}{{"Kueue", r.Kueue}, {"sluice", r.Sluice}} {
		if side.s == nil {
			continue
		}
		keys := make([]string, 0, len(side.s.WritesByMethodAndCode))
		for k := range side.s.WritesByMethodAndCode {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s: %.0f", k, side.s.WritesByMethodAndCode[k]))
		}
		fmt.Fprintf(out, "%s writes by method and code: %s\n", side.name, strings.Join(parts, ", "))
	}
	return nil
}

func (r *VsKueueReport) classes() []string {
	seen := map[string]bool{}
	for _, side := range []*VsKueueSide{r.Kueue, r.Sluice} {
		if side == nil {
			continue
		}
		for c := range side.Classes {
			seen[c] = true
		}
	}
	out := make([]string, 0, len(seen))
	for c := range seen {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}
