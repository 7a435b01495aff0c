// Package kubeflow tests the Kubeflow integrations, MPIJob and TrainJob, on
// a real API server with the CustomResourceDefinitions of the MPI
// operator, the trainer and JobSet (what a TrainJob runs as) from their
// modules. There is no MPI operator, trainer nor JobSet controller here:
// tests write what they would (statuses; the JobSet the trainer builds).
// JobSet's own integration is off: a TrainJob's JobSet is kept within its
// admission and its Jobs are left to it all the same.
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
			if err := c.InstallModuleCRDs("github.com/kubeflow/mpi-operator", "manifests/base"); err != nil {
				return err
			}
			if err := c.InstallJobSetCRD(); err != nil {
				return err
			}
			return c.InstallTrainerCRDs()
		},
		func(cfg *configapi.Configuration) {
			cfg.Integrations.Frameworks = []string{configapi.FrameworkBatchJob, configapi.FrameworkPod, configapi.FrameworkMPIJob, configapi.FrameworkTrainJob}
		}))
}
