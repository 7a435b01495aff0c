// Package controllers tests the core reconcilers (finalizers, Active
// conditions, cohort cycles) on a real API server.
package controllers

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
