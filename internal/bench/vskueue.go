package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// VsKueueOptions configure a run of Kueue's own scheduler benchmark with
// Kueue's minimalkueue and with sluice, one after the other.
type VsKueueOptions struct {
	// GeneratorFile is the scenario, in the runner's schema.
	GeneratorFile string
	// Runner and MinimalKueue are built from Kueue's module
	// (sigs.k8s.io/kueue/test/performance/scheduler/{runner,minimalkueue}).
	Runner, MinimalKueue string
	// KueueDir is that module's folder: its CRDs, and the project folder
	// the runner's test utilities look for.
	KueueDir     string
	KueueVersion string
	// AssetsDir holds etcd and kube-apiserver for the runner's envtest.
	AssetsDir string
	// SluiceBinary runs the adapter and sluice's manager.
	SluiceBinary string
	// WorkDir keeps each run's output: the runner's summary, CSVs, logs.
	WorkDir string
	// Managers are run in this order (ManagerKueue, ManagerSluice).
	Managers []string
	// QPS and Burst raise the runner's client limits when positive.
	QPS     float64
	Burst   int
	Timeout time.Duration
	// ManagerArgs are added to sluice's manager command line (for example
	// --pprof-bind-address to profile it during a run).
	ManagerArgs []string
	// Reuse reads the last run's output of a manager not in Managers, if
	// its folder holds one, so that one side can be measured again alone
	// (the report says which side was reused).
	Reuse bool
	// Progress gets a line as each run starts and ends.
	Progress io.Writer
}

// RunVsKueue runs the scenario under Kueue's runner once per manager.
func RunVsKueue(ctx context.Context, opts VsKueueOptions) (*VsKueueReport, error) {
	gen, err := filepath.Abs(opts.GeneratorFile)
	if err != nil {
		return nil, err
	}
	report := &VsKueueReport{KueueVersion: opts.KueueVersion, Generator: opts.GeneratorFile, RunnerQPS: opts.QPS, RunnerBurst: opts.Burst}
	for _, manager := range opts.Managers {
		fmt.Fprintf(opts.Progress, "running %s under Kueue's runner (%s)...\n", manager, opts.KueueVersion)
		start := time.Now()
		dir := filepath.Join(opts.WorkDir, manager)
		if err := runUnderKueueRunner(ctx, opts, manager, gen, dir); err != nil {
			return nil, err
		}
		side, err := readRunnerResults(dir, manager)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(opts.Progress, "%s done in %s (output in %s)\n", manager, time.Since(start).Round(time.Second), dir)
		report.set(manager, side)
	}
	if opts.Reuse {
		for _, manager := range []string{ManagerKueue, ManagerSluice} {
			if slices.Contains(opts.Managers, manager) {
				continue
			}
			side, err := readRunnerResults(filepath.Join(opts.WorkDir, manager), manager)
			if err != nil {
				continue // no earlier run to reuse
			}
			side.Reused = true
			report.set(manager, side)
		}
	}
	return report, nil
}

func (r *VsKueueReport) set(manager string, side *VsKueueSide) {
	switch manager {
	case ManagerKueue:
		r.Kueue = side
	case ManagerSluice:
		r.Sluice = side
	}
}

// runUnderKueueRunner runs the runner with the adapter as its
// minimalkueue. The launcher's name is the manager's: the runner names its
// stats file after it.
func runUnderKueueRunner(ctx context.Context, opts VsKueueOptions, manager, generator, dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	binary := opts.SluiceBinary
	if manager == ManagerKueue {
		binary = opts.MinimalKueue
	}
	launcher := filepath.Join(dir, manager)
	var extra strings.Builder
	if manager == ManagerSluice {
		for _, a := range opts.ManagerArgs {
			fmt.Fprintf(&extra, " --manager-arg=%q", a)
		}
	}
	script := fmt.Sprintf("#!/bin/sh\nexec %q bench-vs-kueue adapter --manager %s --binary %q --report %q%s -- \"$@\"\n",
		opts.SluiceBinary, manager, binary, filepath.Join(dir, adapterReportFile), extra.String())
	if err := os.WriteFile(launcher, []byte(script), 0o755); err != nil {
		return fmt.Errorf("writing the launcher the runner starts: %w", err)
	}
	assets, err := filepath.Abs(opts.AssetsDir)
	if err != nil {
		return err
	}
	args := []string{"-o", dir, "--crds", filepath.Join(opts.KueueDir, "config", "components", "crd", "bases"),
		"--generatorConfig", generator, "--minimalKueue", launcher, "--timeout", opts.Timeout.String()}
	if opts.QPS > 0 {
		args = append(args, "--qps", fmt.Sprint(opts.QPS))
	}
	if opts.Burst > 0 {
		args = append(args, "--burst", fmt.Sprint(opts.Burst))
	}
	logPath := filepath.Join(dir, "runner.log")
	log, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.CommandContext(ctx, opts.Runner, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = append(os.Environ(), "KUBEBUILDER_ASSETS="+assets, "PROJECT_DIR="+opts.KueueDir)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = time.Minute
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("running the runner of Kueue's benchmark with %s: %w (log: %s)", manager, err, logPath)
	}
	return nil
}
