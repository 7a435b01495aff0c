// Package admission tests admission on a real API server: ordering, queueing
// strategies, namespace selection, borrowing and lending, flavor choice,
// stop policies, deactivation, execution limits, pending reasons, admission
// checks (the tests play their controller), and the
// quota invariant under concurrent load.
package admission

import (
	"os"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/manager"
	"github.com/sluicehq/sluice/test/integration/framework"
)

var cluster *framework.Cluster

func TestMain(m *testing.M) {
	os.Exit(framework.RunSuite(m, &cluster, manager.Options{EnableWebhooks: true, CheckStuckAfter: 2 * time.Second}))
}
