// Package provisioning tests the built-in ProvisioningRequest admission
// check on a real API server with the autoscaler's ProvisioningRequest
// CRD installed. There is no autoscaler here: tests write the requests'
// conditions the way it would, and no Job controller: they write the Jobs'
// status.
package provisioning

import (
	"os"
	"testing"

	"github.com/sluicehq/sluice/internal/manager"
	"github.com/sluicehq/sluice/test/integration/framework"
)

var cluster *framework.Cluster

func TestMain(m *testing.M) {
	// The CRD before the manager starts: it sets up the check's controller
	// only for a cluster that serves ProvisioningRequests.
	os.Exit(framework.RunSuitePrepared(m, &cluster, manager.Options{EnableWebhooks: true},
		(*framework.Cluster).InstallProvisioningRequestCRD, nil))
}
