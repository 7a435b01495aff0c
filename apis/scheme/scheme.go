// Package scheme registers the kueue.x-k8s.io/v1beta2 types (and v1beta1,
// converted through them) together with the
// built-in Kubernetes types, the autoscaler's ProvisioningRequest and the job kinds of
// other projects that sluice queues (JobSet, RayJob, RayCluster, LeaderWorkerSet, MPIJob, AppWrapper), for clients (controller-runtime or client-go
// based) that talk to a cluster running sluice.
package scheme

import (
	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	awv1beta2 "github.com/project-codeflare/appwrapper/api/v1beta2"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	autoscaling "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	lws "sigs.k8s.io/lws/api/leaderworkerset/v1"

	kueuev1beta1 "github.com/sluicehq/sluice/apis/kueue/v1beta1"
	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// Scheme holds the built-in types and sluice's API types.
var Scheme = runtime.NewScheme()

func init() {
	utilruntime.Must(AddToScheme(Scheme))
}

// AddToScheme adds the built-in types and sluice's API types to s.
func AddToScheme(s *runtime.Scheme) error {
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return err
	}
	if err := kueue.AddToScheme(s); err != nil {
		return err
	}
	if err := kueuev1beta1.AddToScheme(s); err != nil {
		return err
	}
	// The ProvisioningRequests the provisioning admission check creates.
	if err := autoscaling.AddToScheme(s); err != nil {
		return err
	}
	// The job kinds of other projects sluice queues.
	if err := jobset.AddToScheme(s); err != nil {
		return err
	}
	if err := rayv1.AddToScheme(s); err != nil {
		return err
	}
	if err := lws.AddToScheme(s); err != nil {
		return err
	}
	if err := mpiv2.AddToScheme(s); err != nil {
		return err
	}
	if err := awv1beta2.AddToScheme(s); err != nil {
		return err
	}
	return s.SetVersionPriority(kueue.GroupVersion, kueuev1beta1.GroupVersion)
}
