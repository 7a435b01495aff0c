// Package pods tests the plain Pod integration and the standalone opt-in on
// a real API server: which Pods are gated, the Workload of a Pod, admission
// that injects the flavor and removes the gate, finishing, eviction by
// deletion, and the scenarios of shared/spec/standalone.md that don't need
// pod groups. There is no kubelet here: tests write Pod phases.
package pods

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
