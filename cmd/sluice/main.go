// Command sluice is the single binary of sluice: the manager that runs in a
// cluster, a local development cluster (dev), the benchmark (bench),
// migrate, uninstall, version, and the kubectl plugin (`sluice kubectl`, or
// this binary named kubectl-sluice).
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/sluicehq/sluice/internal/plugin"
)

func main() {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	// Installed as kubectl-sluice (a link or a copy on the PATH), this
	// binary is the kubectl plugin: `kubectl sluice list workloads`.
	if strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe") == "kubectl-sluice" {
		if err := plugin.NewCommand("kubectl-sluice", streams).Execute(); err != nil {
			fmt.Fprintln(os.Stderr, "kubectl sluice:", err)
			os.Exit(1)
		}
		return
	}
	root := &cobra.Command{
		Use:           "sluice",
		Short:         "Kubernetes-native job queueing, compatible with the Kueue API",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newManagerCommand(), newDevCommand(), newDashboardCommand(), newBenchCommand(), newBenchVsKueueCommand(), newMigrateCommand(), newUninstallCommand(), newVersionCommand(),
		plugin.NewCommand("kubectl", streams))
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "sluice:", err)
		os.Exit(1)
	}
}
