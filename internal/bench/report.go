package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is the outcome of a run. The JSON names are read by tools and
// dashboards: keep them.
type Report struct {
	Scenario string `json:"scenario"`
	Machine  string `json:"machine"`

	Workloads int `json:"workloads"`
	Admitted  int `json:"admitted"`
	Finished  int `json:"finished"`
	Evictions int `json:"evictions"`

	// WallSeconds runs from the first creation to the last Finished write.
	WallSeconds         float64 `json:"wallSeconds"`
	PackingBoundSeconds float64 `json:"packingBoundSeconds"`
	WallOverBound       float64 `json:"wallOverBound"`

	// AdmittedPerSecond is admissions over the span from the first creation
	// to the last admission; the peak is the busiest 5 s window.
	AdmittedPerSecond     float64 `json:"admittedPerSecond"`
	PeakAdmittedPerSecond float64 `json:"peakAdmittedPerSecond"`
	// APICeilingPerSecond is the replay's creations+admission writes per
	// second on the same API server with no scheduling.
	APICeilingPerSecond float64 `json:"apiCeilingPerSecond"`
	AdmittedOverCeiling float64 `json:"admittedOverCeiling"`
	// APIFloorSeconds estimates the least wall time the API server allows:
	// every workload costs three writes (creation, admission, Finished) and
	// the replay measured two per admission, so 1.5 x workloads / ceiling.
	// When it exceeds the packing bound, the API server is the bottleneck.
	APIFloorSeconds float64 `json:"apiFloorSeconds"`

	// WritesPerAdmission are the writes on Workloads (and their status) that
	// neither the bench's creations nor its Finished writes explain, per
	// admission. ManagerWrites break every such write down by resource.
	WritesPerAdmission float64            `json:"writesPerAdmission"`
	ManagerWrites      map[string]float64 `json:"managerWrites"`
	// StatusWrites is the manager's own account of its status writes, by
	// what was written and how it went (sluice_status_writes_total).
	StatusWrites map[string]float64 `json:"statusWrites,omitempty"`

	ManagerCPUSeconds   float64 `json:"managerCPUSeconds"`
	ManagerPeakRSSBytes int64   `json:"managerPeakRSSBytes"`
	Cycles              uint64  `json:"cycles"`
	CyclesOver100ms     uint64  `json:"cyclesOver100ms"`
	SlowestCycleSeconds float64 `json:"slowestCycleSeconds"`

	FinishLagMeanSeconds float64 `json:"finishLagMeanSeconds"`
	FinishLagP99Seconds  float64 `json:"finishLagP99Seconds"`

	Classes             map[string]Latency    `json:"classes"`
	ClusterQueueClasses map[string]QueueUsage `json:"clusterQueueClasses"`
}

// QueueUsage is the quota in use over the run, in percent of nominal.
type QueueUsage struct {
	Queues           int     `json:"queues"`
	MeanUsagePercent float64 `json:"meanUsagePercent"`
}

// observations are what a run gathered, for buildReport.
type observations struct {
	scenario         string
	plan             *Plan
	runs             []workloadRun
	start, end       time.Time
	ceilingPerSecond float64
	managerWrites    writeCounts // writes during the scenario, the bench's own subtracted
	usage            managerUsage
	cycles           cycleStats
}

func buildReport(o observations) *Report {
	r := &Report{
		Scenario:            o.scenario,
		Machine:             fmt.Sprintf("%s/%s, %d CPUs", runtime.GOOS, runtime.GOARCH, runtime.NumCPU()),
		Workloads:           len(o.plan.Workloads),
		PackingBoundSeconds: o.plan.PackingBound().Seconds(),
		WallSeconds:         o.end.Sub(o.start).Seconds(),
		APICeilingPerSecond: o.ceilingPerSecond,
		ManagerWrites:       o.managerWrites,
		ManagerCPUSeconds:   o.usage.CPU.Seconds(),
		ManagerPeakRSSBytes: o.usage.PeakRSS,
		Cycles:              o.cycles.Cycles,
		CyclesOver100ms:     o.cycles.Over100ms,
		StatusWrites:        o.cycles.Writes,
		SlowestCycleSeconds: o.cycles.SlowestSeconds,
		Classes:             map[string]Latency{},
		ClusterQueueClasses: map[string]QueueUsage{},
	}
	r.WallOverBound = ratio(r.WallSeconds, r.PackingBoundSeconds)

	waits := map[string][]time.Duration{}
	var admittedAt, lags []time.Duration
	var lastAdmission time.Duration
	for i, run := range o.runs {
		r.Evictions += run.evictions
		if run.admittedAt.IsZero() {
			continue
		}
		r.Admitted++
		class := o.plan.Workloads[i].Class
		waits[class] = append(waits[class], run.admittedAt.Sub(run.requestedAt))
		offset := run.admittedAt.Sub(o.start)
		admittedAt = append(admittedAt, offset)
		lastAdmission = max(lastAdmission, offset)
		if !run.finishedAt.IsZero() {
			r.Finished++
			lags = append(lags, run.finishLag)
		}
	}
	for class, ds := range waits {
		r.Classes[class] = summarize(ds)
	}
	r.AdmittedPerSecond = ratio(float64(r.Admitted), lastAdmission.Seconds())
	r.PeakAdmittedPerSecond = peakRate(admittedAt, 5*time.Second)
	r.AdmittedOverCeiling = ratio(r.AdmittedPerSecond, r.APICeilingPerSecond)
	r.APIFloorSeconds = ratio(1.5*float64(r.Workloads), r.APICeilingPerSecond)
	r.WritesPerAdmission = ratio(workloadWrites(o.managerWrites), float64(r.Admitted))
	lag := summarize(lags)
	r.FinishLagMeanSeconds, r.FinishLagP99Seconds = lag.MeanSeconds, lag.P99Seconds
	r.ClusterQueueClasses = queueUsage(o)
	return r
}

// queueUsage is, per ClusterQueue class, the CPU-time its workloads held
// over the run divided by the class's nominal CPU times the wall time.
func queueUsage(o observations) map[string]QueueUsage {
	classOf := map[string]string{}
	nominal := map[string]float64{}
	queues := map[string]int{}
	for _, q := range o.plan.Queues {
		classOf[q.Name] = q.Class
		nominal[q.Class] += float64(q.NominalMilliCPU)
		queues[q.Class]++
	}
	used := map[string]float64{} // milliCPU-seconds
	for i, run := range o.runs {
		w := o.plan.Workloads[i]
		used[classOf[w.Queue]] += float64(w.RequestMilliCPU) * busyTime(run.inUse, o.start, o.end).Seconds()
	}
	wall := o.end.Sub(o.start).Seconds()
	out := map[string]QueueUsage{}
	for class, n := range queues {
		out[class] = QueueUsage{Queues: n, MeanUsagePercent: 100 * ratio(used[class], nominal[class]*wall)}
	}
	return out
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// WriteJSON writes the report to path.
func (r *Report) WriteJSON(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the report: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}

// PrintTable writes the report for a terminal.
func (r *Report) PrintTable(out io.Writer) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	row := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	row("scenario\t%s (%s)", r.Scenario, r.Machine)
	row("workloads\t%d created, %d admitted, %d finished, %d evictions", r.Workloads, r.Admitted, r.Finished, r.Evictions)
	row("wall / packing bound\t%.1f s / %.1f s = %.2fx", r.WallSeconds, r.PackingBoundSeconds, r.WallOverBound)
	row("API floor (estimate)\t%.1f s: 3 writes per workload at the ceiling's rate; wall / floor = %.2fx", r.APIFloorSeconds, ratio(r.WallSeconds, r.APIFloorSeconds))
	row("admitted/s / API ceiling\t%.1f / %.1f = %.0f%%  (peak over 5 s: %.1f/s)", r.AdmittedPerSecond, r.APICeilingPerSecond, 100*r.AdmittedOverCeiling, r.PeakAdmittedPerSecond)
	row("Workload writes per admission\t%.2f (beyond creation and the mimic's Finished write)", r.WritesPerAdmission)
	if len(r.StatusWrites) > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(r.StatusWrites)) {
			parts = append(parts, fmt.Sprintf("%s %.0f", k, r.StatusWrites[k]))
		}
		row("status writes (manager's count)\t%s", strings.Join(parts, ", "))
	}
	row("manager\t%.1f s CPU, peak RSS %.0f MiB", r.ManagerCPUSeconds, float64(r.ManagerPeakRSSBytes)/(1<<20))
	row("cycles\t%d, %d over 100 ms, slowest %.0f ms", r.Cycles, r.CyclesOver100ms, 1000*r.SlowestCycleSeconds)
	row("finish lag\tmean %.3f s, p99 %.3f s", r.FinishLagMeanSeconds, r.FinishLagP99Seconds)
	row("")
	row("time to admission\tcount\tmean\tp50\tp90\tp99\tmax")
	for _, class := range slices.Sorted(maps.Keys(r.Classes)) {
		l := r.Classes[class]
		row("  %s\t%d\t%.2f s\t%.2f s\t%.2f s\t%.2f s\t%.2f s", class, l.Count, l.MeanSeconds, l.P50Seconds, l.P90Seconds, l.P99Seconds, l.MaxSeconds)
	}
	row("")
	row("ClusterQueue usage\tqueues\tmean %% of nominal")
	for _, class := range slices.Sorted(maps.Keys(r.ClusterQueueClasses)) {
		u := r.ClusterQueueClasses[class]
		row("  %s\t%d\t%.1f%%", class, u.Queues, u.MeanUsagePercent)
	}
	row("")
	row("manager writes during the run\tcount")
	for _, key := range slices.Sorted(maps.Keys(r.ManagerWrites)) {
		row("  %s\t%.0f", key, r.ManagerWrites[key])
	}
	return w.Flush()
}

// RequiredReportFields are the top-level JSON names the report promises.
func RequiredReportFields() []string {
	return []string{
		"wallSeconds", "packingBoundSeconds", "admittedPerSecond", "peakAdmittedPerSecond", "apiCeilingPerSecond",
		"writesPerAdmission", "managerCPUSeconds", "managerPeakRSSBytes", "finishLagMeanSeconds", "finishLagP99Seconds",
		"workloads", "admitted", "finished", "classes", "clusterQueueClasses",
	}
}
