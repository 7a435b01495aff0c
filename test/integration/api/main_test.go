// Package api tests the kueue.x-k8s.io/v1beta2 contract on a real API server
// with sluice's webhooks: objects round-trip with every field, Kueue
// manifests apply unchanged, and every CEL and webhook rule rejects what it
// must with a message naming the field.
package api

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
