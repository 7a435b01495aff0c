// Package configuration tests the Configuration fields sluice acts on, on a
// real API server, with one manager configured as a Kueue user might:
// labels copied from jobs to Workloads, resources excluded and
// transformed before they count, finished and deactivated workloads
// deleted after their retention.
package configuration

import (
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	"github.com/sluicehq/sluice/internal/manager"
	"github.com/sluicehq/sluice/test/integration/framework"
)

var cluster *framework.Cluster

const (
	mig       = corev1.ResourceName("nvidia.com/mig-1g.5gb")
	gpuMemory = corev1.ResourceName("acme.io/gpu-memory")
	excluded  = corev1.ResourceName("example.com/fpga")
)

func TestMain(m *testing.M) {
	os.Exit(framework.RunSuiteWith(m, &cluster, manager.Options{EnableWebhooks: true}, func(cfg *configapi.Configuration) {
		cfg.Integrations.LabelKeysToCopy = []string{"team", "example.com/cost-center"}
		replace := configapi.Replace
		cfg.Resources = &configapi.Resources{
			ExcludeResourcePrefixes: []string{"example.com/"},
			Transformations: []configapi.ResourceTransformation{{Input: mig, Strategy: &replace,
				Outputs: corev1.ResourceList{gpuMemory: resource.MustParse("5")}}},
		}
		cfg.ObjectRetentionPolicies = &configapi.ObjectRetentionPolicies{Workloads: &configapi.WorkloadRetentionPolicy{
			AfterFinished: &metav1.Duration{}, AfterDeactivatedByKueue: &metav1.Duration{}}}
	}))
}
