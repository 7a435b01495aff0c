package main

import (
	"io"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/sluicehq/sluice/internal/devcluster"
)

func newDevCommand() *cobra.Command {
	opts := devcluster.Options{}
	var logs logFlags
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run a local cluster (API server, controller-manager, scheduler, simulated nodes) with sluice in it, until interrupted",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := logs.validate(); err != nil {
				return err
			}
			opts.Out = cmd.OutOrStdout()
			opts.ManagerLog = func(w io.Writer) {
				// Flags were validated above, so setting up can't fail.
				_, _ = logs.setupTo(w)
			}
			return devcluster.Run(ctrl.SetupSignalHandler(), opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.AssetsDir, "assets", "bin/k8s", "folder holding the etcd and kube-apiserver binaries (make tools builds them)")
	fs.StringVar(&opts.DataDir, "data-dir", "", "folder for etcd data, logs and the kubeconfig; default: a temporary folder")
	fs.BoolVar(&opts.Keep, "keep", false, "keep the data folder on exit")
	fs.StringVar(&opts.KubeconfigOut, "kubeconfig-out", "", "where to write the admin kubeconfig; default: <data-dir>/kubeconfig")
	fs.StringVar(&opts.ConfigFile, "config", "", "the manager's configuration file (kind Configuration, as for `sluice manager`); the local cluster's serving settings win over it")
	fs.BoolVar(&opts.NoSample, "no-sample", false, "don't apply the sample flavors, ClusterQueues, namespaces and LocalQueues")
	fs.StringSliceVar(&opts.With, "with", nil, "also run these projects' controllers (jobset, lws, trainer, ray, mpi, appwrapper; make dev DEV_WITH=... builds each the first time), and queue their kinds")
	fs.IntVar(&opts.Workers, "workers", 0, "also start this many worker clusters (each with its own control plane, nodes and sluice) and dispatch the manager cluster's sample queues to them with MultiKueue")
	fs.IntVar(&opts.Nodes.Count, "nodes", 4, "how many simulated nodes (kwok), in each cluster")
	fs.StringVar(&opts.Nodes.CPU, "node-cpu", "8", "CPU of each simulated node")
	fs.StringVar(&opts.Nodes.Memory, "node-memory", "16Gi", "memory of each simulated node")
	fs.StringVar(&opts.Nodes.Pods, "node-pods", "110", "pods each simulated node takes")
	fs.StringVar(&opts.Nodes.FlavorLabels, "node-flavor-labels", devcluster.DefaultFlavorLabels,
		`node groups, ";"-separated, each "key=value[,...]" with optional "|key=value:Effect[,...]" taints; nodes are shared out evenly`)
	logs.bind(fs)
	return cmd
}
