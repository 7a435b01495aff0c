// Package jobs tests the batch/v1 Job integration on a real API server:
// which Jobs are queued, the webhook, the Workload built for a Job, start
// with injected flavors, eviction that stops the Job before the quota is
// given back, finishing, partial admission, reclaimable pods, changes and
// deletion. There is no Job controller here: tests write the Job's status
// the way it would.
package jobs

import (
	"os"
	"testing"

	"github.com/sluicehq/sluice/internal/manager"
	"github.com/sluicehq/sluice/test/integration/framework"
)

var cluster *framework.Cluster

func TestMain(m *testing.M) {
	os.Exit(framework.RunSuite(m, &cluster, manager.Options{EnableWebhooks: true}))
}
