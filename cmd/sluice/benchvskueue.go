package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/sluicehq/sluice/internal/bench"
)

func newBenchVsKueueCommand() *cobra.Command {
	opts := bench.VsKueueOptions{}
	var out string
	cmd := &cobra.Command{
		Use:   "bench-vs-kueue --generator FILE --runner PATH --minimalkueue PATH --kueue-dir DIR [--out FILE.json]",
		Short: "Run Kueue's own scheduler benchmark with Kueue's minimalkueue and with sluice, side by side",
		Long: `bench-vs-kueue runs Kueue's scheduler benchmark runner (built from Kueue's module by
"make bench-vs-kueue") twice on the same scenario: once with minimalkueue, once with
"sluice manager", each behind the runner's --minimalKueue launch contract, and prints
one table of both runs: wall time, time to admission per class, evictions, manager CPU
and peak memory, writes, and the runner's own writes refused with a conflict.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for flag, value := range map[string]string{"--generator": opts.GeneratorFile, "--runner": opts.Runner,
				"--minimalkueue": opts.MinimalKueue, "--kueue-dir": opts.KueueDir} {
				if value == "" {
					return fmt.Errorf("%s is required (make bench-vs-kueue sets it)", flag)
				}
			}
			if opts.Timeout <= 0 {
				return fmt.Errorf("--timeout must be positive, got %s", opts.Timeout)
			}
			for _, m := range opts.Managers {
				if m != bench.ManagerKueue && m != bench.ManagerSluice {
					return fmt.Errorf("--managers: %q is neither %q nor %q", m, bench.ManagerKueue, bench.ManagerSluice)
				}
			}
			binary, err := os.Executable()
			if err != nil {
				return fmt.Errorf("finding the sluice binary: %w", err)
			}
			opts.SluiceBinary = binary
			if opts.WorkDir == "" {
				opts.WorkDir = filepath.Join("bin", "bench-vs-kueue")
			}
			if opts.WorkDir, err = filepath.Abs(opts.WorkDir); err != nil {
				return err
			}
			opts.Progress = cmd.ErrOrStderr()
			report, err := bench.RunVsKueue(ctrl.SetupSignalHandler(), opts)
			if err != nil {
				return err
			}
			return printReport(cmd.OutOrStdout(), report, out)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.GeneratorFile, "generator", "", "scenario file (the schema of Kueue's scheduler benchmark)")
	fs.StringVar(&opts.Runner, "runner", "", "Kueue's runner binary (test/performance/scheduler/runner)")
	fs.StringVar(&opts.MinimalKueue, "minimalkueue", "", "Kueue's minimalkueue binary (test/performance/scheduler/minimalkueue)")
	fs.StringVar(&opts.KueueDir, "kueue-dir", "", "the folder of Kueue's Go module: its CRDs, and the project folder the runner needs")
	fs.StringVar(&opts.KueueVersion, "kueue-version", "", "the Kueue version measured, for the report")
	fs.StringVar(&opts.AssetsDir, "assets", "bin/k8s", "folder holding etcd and kube-apiserver for the runner's envtest")
	fs.StringVar(&out, "out", "", "where to write the report as JSON")
	fs.StringVar(&opts.WorkDir, "work-dir", "", "folder for each run's output (default bin/bench-vs-kueue)")
	fs.StringSliceVar(&opts.Managers, "managers", []string{bench.ManagerKueue, bench.ManagerSluice}, "which managers to run, in order")
	fs.Float64Var(&opts.QPS, "qps", 0, "the runner's client QPS (0: the runner's default)")
	fs.IntVar(&opts.Burst, "burst", 0, "the runner's client burst (0: the runner's default)")
	fs.StringArrayVar(&opts.ManagerArgs, "manager-arg", nil, "an extra flag for sluice's manager, e.g. --manager-arg=--pprof-bind-address=127.0.0.1:6060 (repeatable)")
	fs.BoolVar(&opts.Reuse, "reuse", false, "for a manager left out of --managers, report its last run in --work-dir (one side measured again alone)")
	fs.DurationVar(&opts.Timeout, "timeout", 30*time.Minute, "the runner's longest recording")
	cmd.AddCommand(newBenchAdapterCommand())
	return cmd
}

// newBenchAdapterCommand is what the runner starts as its minimalkueue.
func newBenchAdapterCommand() *cobra.Command {
	opts := bench.AdapterOptions{}
	cmd := &cobra.Command{
		Use:    "adapter --manager kueue|sluice --binary PATH --report FILE -- RUNNER-ARGS...",
		Short:  "Run a manager behind the launch contract of Kueue's runner (started by the runner)",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Binary == "" || opts.Report == "" {
				return errors.New("--binary and --report are required")
			}
			stop := make(chan os.Signal, 1)
			signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
			return bench.RunAdapter(cmd.Context(), opts, args, stop)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.Manager, "manager", "", "kueue or sluice")
	fs.StringVar(&opts.Binary, "binary", "", "minimalkueue, or the sluice binary")
	fs.StringVar(&opts.Report, "report", "", "where to write what was measured")
	fs.StringArrayVar(&opts.ManagerArgs, "manager-arg", nil, "an extra flag for sluice's manager (repeatable)")
	return cmd
}
