// Package jobset tests the JobSet integration on a real API server with
// JobSet's CustomResourceDefinition from its module: which JobSets are
// queued, the webhook, the Workload built for a JobSet, start with injected
// flavors, eviction, finishing, its child Jobs left to it (and the
// standalone opt-in of a child Job). There is no JobSet controller here:
// tests write the JobSet's status and create its children the way it
// would.
package jobset

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
		(*framework.Cluster).InstallJobSetCRD,
		func(cfg *configapi.Configuration) {
			cfg.Integrations.Frameworks = []string{configapi.FrameworkBatchJob, configapi.FrameworkPod, configapi.FrameworkJobSet}
		}))
}
