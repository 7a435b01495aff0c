package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluicehq/sluice/apis/scheme"
	"github.com/sluicehq/sluice/internal/storagemigration"
)

func newMigrateCommand() *cobra.Command {
	var kubeconfig string
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Rewrite kueue.x-k8s.io objects in the storage version (v1beta2) and drop v1beta1 from the CRDs' storedVersions",
		Long: `After switching from a Kueue that stored kueue.x-k8s.io/v1beta1 (0.15 or older)
and applying sluice's CRDs, run this once, with sluice's manager running (it
converts v1beta1 objects). Every object is rewritten unchanged, in v1beta2, and
status.storedVersions of each CRD becomes [v1beta2], so that a later version
of the CRDs may stop serving v1beta1. It can be run again safely.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			restConfig, err := loadRESTConfig(kubeconfig)
			if err != nil {
				return err
			}
			s := runtime.NewScheme()
			if err := scheme.AddToScheme(s); err != nil {
				return err
			}
			if err := apiextensionsv1.AddToScheme(s); err != nil {
				return err
			}
			c, err := client.New(restConfig, client.Options{Scheme: s})
			if err != nil {
				return fmt.Errorf("a client for the cluster: %w", err)
			}
			results, err := storagemigration.Run(ctrl.SetupSignalHandler(), c)
			for _, r := range results {
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %d objects rewritten; stored versions %s dropped\n", r.CRD, r.Rewritten, strings.Join(r.From, ", "))
			}
			if err != nil {
				return err
			}
			if len(results) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "nothing to migrate: every CRD of kueue.x-k8s.io stores only its storage version")
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the cluster; default $KUBECONFIG, ~/.kube/config or in-cluster")
	return cmd
}
