// Package provisioning tests the built-in ProvisioningRequest admission
// check on a real API server with the autoscaler's ProvisioningRequest
// CRD installed. There is no autoscaler here: tests write the requests'
// conditions the way it would, and no Job controller: they write the Jobs'
// status.
package provisioning

import (
	"fmt"
	"os"
	"testing"

	"github.com/sluicehq/sluice/internal/manager"
	"github.com/sluicehq/sluice/test/integration/framework"
)

var cluster *framework.Cluster

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	c, err := framework.StartCluster()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the cluster:", err)
		return 1
	}
	defer func() { _ = c.Stop() }()
	// Before the manager starts: it sets up the check's controller only
	// for a cluster that serves ProvisioningRequests.
	if err := c.InstallProvisioningRequestCRD(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	stop, err := c.StartManager(c.ManagerConfig(), manager.Options{EnableWebhooks: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the manager:", err)
		return 1
	}
	defer func() {
		if err := stop(); err != nil {
			fmt.Fprintln(os.Stderr, "the manager failed:", err)
		}
	}()
	cluster = c
	return m.Run()
}
