package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/sluicehq/sluice/internal/bench"
)

func newBenchCommand() *cobra.Command {
	opts := bench.Options{}
	var out string
	cmd := &cobra.Command{
		Use:   "bench --generator FILE [--out FILE.json] [--assets DIR | --kubeconfig PATH]",
		Short: "Measure admission throughput and latency against the API server's ceiling and the packing bound",
		Long: `bench starts etcd and kube-apiserver (or uses --kubeconfig), runs "sluice manager --webhooks=false"
as a separate process, creates the scenario's queues and Workloads on its schedule, marks each
Workload Finished its runtime after admission, then replays the same traffic with no scheduling to
measure the API server's ceiling. It prints a table and writes the report as JSON to --out.

A MultiKueue scenario (a file with a top-level "multikueue:", such as bench/multikueue.yaml)
starts a manager cluster and worker clusters instead, each with its own manager process, and
measures dispatch: Jobs created in the manager until each starts in a worker.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.GeneratorFile == "" {
				return errors.New("--generator is required: a scenario file such as bench/baseline.yaml")
			}
			if opts.Timeout <= 0 {
				return fmt.Errorf("--timeout must be positive, got %s", opts.Timeout)
			}
			binary, err := os.Executable()
			if err != nil {
				return fmt.Errorf("finding the sluice binary for the manager process: %w", err)
			}
			opts.ManagerBinary = binary
			opts.Progress = cmd.ErrOrStderr()
			// The bench's own client and watch log errors only: the
			// progress line is the terminal's; the manager logs to its file.
			logger := zap.New(zap.WriteTo(cmd.ErrOrStderr()), zap.Level(zapcore.ErrorLevel))
			ctrl.SetLogger(logger)
			klog.SetLogger(logger)
			if bench.IsMultiKueueScenario(opts.GeneratorFile) {
				report, err := bench.RunMultiKueue(ctrl.SetupSignalHandler(), opts)
				if err != nil {
					return err
				}
				return printReport(cmd.OutOrStdout(), report, out)
			}
			report, err := bench.Run(ctrl.SetupSignalHandler(), opts)
			if err != nil {
				return err
			}
			return printReport(cmd.OutOrStdout(), report, out)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.GeneratorFile, "generator", "", "scenario file (the schema of Kueue's scheduler benchmark)")
	fs.StringVar(&out, "out", "", "where to write the report as JSON")
	fs.StringVar(&opts.AssetsDir, "assets", "bin/k8s", "folder holding the etcd and kube-apiserver binaries (make tools builds them)")
	fs.StringVar(&opts.Kubeconfig, "kubeconfig", "", "use this cluster instead of starting one (it must not run sluice already)")
	fs.IntVar(&opts.Creators, "creators", bench.DefaultCreators, "creations in flight at most (the API ceiling's replay uses the same)")
	fs.DurationVar(&opts.Timeout, "timeout", 30*time.Minute, "give up if the scenario has not finished by then")
	fs.StringArrayVar(&opts.ManagerArgs, "manager-arg", nil, "an extra flag for the manager process, e.g. --manager-arg=--pprof-bind-address=127.0.0.1:6060 (repeatable)")
	fs.StringVar(&opts.WorkDir, "work-dir", "", "folder for logs and etcd data; default: a temporary folder, removed after a successful run")
	return cmd
}

// benchReport is what both benchmarks print and save.
type benchReport interface {
	PrintTable(io.Writer) error
	WriteJSON(path string) error
}

// printReport prints a report's table and, when out is set, writes its JSON.
func printReport(w io.Writer, report benchReport, out string) error {
	if err := report.PrintTable(w); err != nil {
		return err
	}
	if out != "" {
		return report.WriteJSON(out)
	}
	return nil
}
