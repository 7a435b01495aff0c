// Package kubeflow tests the Kubeflow MPIJob integration on a real API
// server with the MPI operator's CustomResourceDefinition from its module.
// There is no MPI operator here: tests write the status it would.
package kubeflow

import (
	"os"
	"testing"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	"github.com/sluicehq/sluice/internal/manager"
	"github.com/sluicehq/sluice/test/integration/framework"
)

var cluster *framework.Cluster

func TestMain(m *testing.M) {
	os.Exit(framework.RunSuitePrepared(m, &cluster, manager.Options{EnableWebhooks: true},
		func(c *framework.Cluster) error {
			return c.InstallModuleCRDs("github.com/kubeflow/mpi-operator", "manifests/base")
		},
		func(cfg *configapi.Configuration) {
			cfg.Integrations.Frameworks = []string{configapi.FrameworkBatchJob, configapi.FrameworkMPIJob}
		}))
}
