package manager

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	autoscaling "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluicehq/sluice/internal/controller/provisioning"
	"github.com/sluicehq/sluice/internal/integration"
)

// setupProvisioning adds the ProvisioningRequest admission check
// controller. Its requests are watched only when the cluster serves them
// at startup (a watch on a kind that isn't served would keep the manager
// from starting); otherwise its AdmissionChecks say so and stay inactive,
// so that no ClusterQueue admits past them.
func setupProvisioning(mgr ctrl.Manager, writer client.Client, workloads integration.WorkloadStatusWriter) error {
	_, err := mgr.GetRESTMapper().KindFor(autoscaling.SchemeGroupVersion.WithResource("provisioningrequests"))
	served := err == nil
	if err != nil && !meta.IsNoMatchError(err) {
		return fmt.Errorf("checking whether the cluster serves ProvisioningRequests: %w", err)
	}
	if err := (&provisioning.AdmissionCheckReconciler{Client: writer, Served: served}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the provisioning admission checks: %w", err)
	}
	if !served {
		return nil
	}
	if err := (&provisioning.WorkloadReconciler{Client: writer, Workloads: workloads, Clock: clock.RealClock{}}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the provisioning requests: %w", err)
	}
	return nil
}
