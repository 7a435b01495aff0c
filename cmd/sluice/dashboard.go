package main

import (
	"fmt"
	"net"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/sluicehq/sluice/internal/dashboard"
)

func newDashboardCommand() *cobra.Command {
	var kubeconfig, listen string
	cmd := &cobra.Command{
		Use:   "dashboard",
		Short: "Serve the web dashboard: cohorts and queues with their quota as bars, pending workloads with position and reason, recent admissions and evictions",
		Long: `Serves a web page of the cluster's queues, kept live from watches (the page
updates itself as they change). It reads with your kubeconfig's credentials:
ClusterQueues, LocalQueues and Workloads, and the visibility API for the
order of each queue's pending workloads. Open http://LISTEN/ in a browser.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			restConfig, err := loadRESTConfig(kubeconfig)
			if err != nil {
				return err
			}
			server, err := dashboard.New(restConfig, nil)
			if err != nil {
				return err
			}
			listener, err := net.Listen("tcp", listen)
			if err != nil {
				return fmt.Errorf("--listen %s: %w", listen, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "sluice dashboard on http://%s/\n", listener.Addr())
			return server.Run(ctrl.SetupSignalHandler(), listener)
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "the cluster's kubeconfig (default: $KUBECONFIG, ~/.kube/config, or in-cluster)")
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:8090", "address to serve the dashboard on")
	return cmd
}
