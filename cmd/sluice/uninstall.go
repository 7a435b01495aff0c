package main

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	"github.com/sluicehq/sluice/apis/scheme"
	"github.com/sluicehq/sluice/internal/uninstall"
)

func newUninstallCommand() *cobra.Command {
	var kubeconfig string
	var cleanup, force bool
	opts := uninstall.Options{}
	cmd := &cobra.Command{
		Use:   "uninstall",
		Short: "After removing sluice: delete its webhook configurations and its finalizers, so that nothing is stuck",
		Long: `Run after helm uninstall (or kubectl delete of the manager's Deployment), with
--cleanup. It deletes the install's webhook configurations (they fail closed
with no manager behind them) and removes sluice's finalizers (kueue.x-k8s.io/...)
from every kueue.x-k8s.io object and from the Pods sluice manages, so that
deleting them, or the CRDs, does not hang in Terminating. It deletes no object
of yours, and refuses to run while a manager still holds its leader Lease.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cleanup {
				return errors.New("--cleanup is required: it deletes the webhook configurations and removes sluice's finalizers (see --help)")
			}
			restConfig, err := loadRESTConfig(kubeconfig)
			if err != nil {
				return err
			}
			c, err := client.New(restConfig, client.Options{Scheme: scheme.Scheme})
			if err != nil {
				return fmt.Errorf("a client for the cluster: %w", err)
			}
			disc, err := discovery.NewDiscoveryClientForConfig(restConfig)
			if err != nil {
				return fmt.Errorf("a discovery client for the cluster: %w", err)
			}
			opts.Force, opts.Now = force, time.Now()
			report, err := uninstall.Cleanup(cmd.Context(), c, disc, opts)
			out := cmd.OutOrStdout()
			for _, name := range report.WebhookConfigurations {
				fmt.Fprintf(out, "deleted webhook configuration %s\n", name)
			}
			for _, resource := range slices.Sorted(maps.Keys(report.Finalizers)) {
				if n := report.Finalizers[resource]; n > 0 {
					fmt.Fprintf(out, "removed sluice's finalizers from %d %s\n", n, resource)
				}
			}
			return err
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the cluster; default: $KUBECONFIG, ~/.kube/config or in-cluster")
	fs.BoolVar(&cleanup, "cleanup", false, "delete the webhook configurations and remove sluice's finalizers")
	fs.BoolVar(&force, "force", false, "clean even while the manager's Lease looks held")
	fs.StringVar(&opts.NamePrefix, "name-prefix", "sluice-", "prefix of the install's names (kueue- for config/kueue-names)")
	fs.StringVar(&opts.LeaseNamespace, "namespace", configapi.DefaultNamespace, "the namespace sluice was installed in (its leader Lease)")
	fs.StringVar(&opts.LeaseName, "lease", configapi.DefaultLeaderElectionID, "the manager's leader election Lease")
	return cmd
}
