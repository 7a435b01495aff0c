// Package kinds is the one list of the kinds sluice knows: the manager sets
// up, the standalone owner walk follows and the configuration enables the
// kinds named here, and nothing else names them. Adding a kind is a package
// of its own plus one line below. It must not hold any kind's logic.
package kinds

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluicehq/sluice/internal/integration"
	"github.com/sluicehq/sluice/internal/integration/appwrapper"
	"github.com/sluicehq/sluice/internal/integration/deployment"
	"github.com/sluicehq/sluice/internal/integration/job"
	"github.com/sluicehq/sluice/internal/integration/jobset"
	"github.com/sluicehq/sluice/internal/integration/leaderworkerset"
	"github.com/sluicehq/sluice/internal/integration/mpijob"
	"github.com/sluicehq/sluice/internal/integration/pod"
	"github.com/sluicehq/sluice/internal/integration/ray"
	"github.com/sluicehq/sluice/internal/integration/statefulset"
	"github.com/sluicehq/sluice/internal/integration/trainjob"
)

// All are the registered kinds.
func All() []integration.Registration {
	return []integration.Registration{
		job.Registration,
		pod.Registration,
		deployment.Registration,
		statefulset.Registration,
		jobset.Registration,
		ray.JobRegistration,
		ray.ClusterRegistration,
		ray.ServiceRegistration,
		leaderworkerset.Registration,
		mpijob.Registration,
		trainjob.Registration,
		appwrapper.Registration,
	}
}

// KnownOwners are the registered kinds as the owner walk reads them.
func KnownOwners() map[schema.GroupKind]func() client.Object {
	owners := map[schema.GroupKind]func() client.Object{}
	for _, r := range All() {
		owners[r.GVK.GroupKind()] = r.NewObject
	}
	return owners
}
