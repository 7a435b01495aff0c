// Command sluice is the single binary of sluice: the manager that runs in a
// cluster, a local development cluster (dev), the benchmark (bench) and
// version.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	root := &cobra.Command{
		Use:           "sluice",
		Short:         "Kubernetes-native job queueing, compatible with the Kueue API",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newManagerCommand(), newDevCommand(), newBenchCommand(), newBenchVsKueueCommand(), newMigrateCommand(), newUninstallCommand(), newVersionCommand())
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "sluice:", err)
		os.Exit(1)
	}
}
