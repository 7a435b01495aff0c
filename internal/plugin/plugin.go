// Package plugin is kubectl-sluice: listing queues and workloads, saying why
// a workload waits, and stopping and resuming queues and workloads, through
// the API server as the user (their kubeconfig, their RBAC). It reads and
// writes the kueue.x-k8s.io objects only; it makes no admission decision.
package plugin

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluicehq/sluice/apis/scheme"
)

// session is what every command needs: the user's flags, a client, where
// to print.
type session struct {
	flags  *genericclioptions.ConfigFlags
	out    io.Writer
	client client.Client
	rest   *rest.Config
}

func (s *session) connect() error {
	if s.client != nil {
		return nil
	}
	restConfig, err := s.flags.ToRESTConfig()
	if err != nil {
		return fmt.Errorf("reading the kubeconfig: %w", err)
	}
	c, err := client.New(restConfig, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return fmt.Errorf("a client for the cluster: %w", err)
	}
	s.client, s.rest = c, restConfig
	return nil
}

// namespace is -n, else the kubeconfig context's, else default.
func (s *session) namespace() (string, error) {
	ns, _, err := s.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", fmt.Errorf("the namespace: %w", err)
	}
	return ns, nil
}

// NewCommand is kubectl-sluice's root: `kubectl sluice list ...` once the
// binary is on the PATH under that name, or `sluice kubectl ...`.
func NewCommand(use string, streams genericiooptions.IOStreams) *cobra.Command {
	s := &session{flags: genericclioptions.NewConfigFlags(true), out: streams.Out}
	root := &cobra.Command{
		Use:           use,
		Short:         "Look at sluice's queues and workloads, and stop or resume them",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	s.flags.AddFlags(root.PersistentFlags())
	root.AddCommand(newListCommand(s), newWhyCommand(s), newStopCommand(s, true), newStopCommand(s, false), newTopCommand(s))
	return root
}
