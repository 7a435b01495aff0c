// Package leaderworkerset tests the LeaderWorkerSet integration (and, on
// the same manager, integrations.externalFrameworks) on a real
// API server with LeaderWorkerSet's CustomResourceDefinition from its
// module: the webhook that sends its templates to the pod integration, and
// each group's leader and workers admitted as one pod group. There is no
// LeaderWorkerSet controller here: tests create its StatefulSets and Pods
// the way it (and its own Pod webhook) would.
package leaderworkerset

import (
	"os"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	"github.com/sluicehq/sluice/internal/manager"
	"github.com/sluicehq/sluice/test/integration/framework"
)

var cluster *framework.Cluster

func TestMain(m *testing.M) {
	os.Exit(framework.RunSuitePrepared(m, &cluster, manager.Options{EnableWebhooks: true},
		func(c *framework.Cluster) error {
			if err := c.InstallModuleCRDs("sigs.k8s.io/lws", "config/crd/bases"); err != nil {
				return err
			}
			_, err := envtest.InstallCRDs(c.RestConfig, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{widgetCRD()}})
			return err
		},
		func(cfg *configapi.Configuration) {
			cfg.Integrations.Frameworks = []string{configapi.FrameworkBatchJob, configapi.FrameworkPod, configapi.FrameworkLeaderWorkerSet}
			cfg.Integrations.ExternalFrameworks = []string{"Widget.v1.example.com"}
		}))
}
