// Package appwrapper tests the AppWrapper integration on a real API server
// with the AppWrapper CustomResourceDefinition from its module. There is no
// AppWrapper controller here: tests write what it would (the components it
// creates, its status).
package appwrapper

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
			return c.InstallModuleCRDs("github.com/project-codeflare/appwrapper", "config/crd/bases")
		},
		func(cfg *configapi.Configuration) {
			cfg.Integrations.Frameworks = []string{configapi.FrameworkBatchJob, configapi.FrameworkPod, configapi.FrameworkAppWrapper}
		}))
}
