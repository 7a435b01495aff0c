// Package ray tests the RayJob, RayCluster and RayService integrations on
// a real API server with KubeRay's CustomResourceDefinitions from its
// module: the Workload built for each, start with injected flavors,
// finishing, eviction, the webhook rules that keep a Ray cluster inside
// its admission, a RayJob's cluster and pods left to it (and the
// standalone opt-in of its worker pods), a RayService's clusters queued
// one by one. There is no KubeRay operator here: tests write the status
// it would write and create the children it would.
package ray

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
			return c.InstallModuleCRDs("github.com/ray-project/kuberay/ray-operator", "config/crd/bases")
		},
		func(cfg *configapi.Configuration) {
			cfg.Integrations.Frameworks = []string{configapi.FrameworkBatchJob, configapi.FrameworkPod,
				configapi.FrameworkRayJob, configapi.FrameworkRayCluster, configapi.FrameworkRayService}
		}))
}
