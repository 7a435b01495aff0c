package manager

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	"github.com/sluicehq/sluice/internal/workload"
)

func TestControllerConfig(t *testing.T) {
	got := controllerConfig(nil, false)
	if got.GroupKindConcurrency["Workload.kueue.x-k8s.io"] != 4 || got.GroupKindConcurrency["Job.batch"] != 4 || got.CacheSyncTimeout != 0 {
		t.Errorf("defaults: %+v", got)
	}
	timeout := 5 * time.Minute
	got = controllerConfig(&configapi.ControllerConfigurationSpec{
		GroupKindConcurrency: map[string]int{"Job.batch": 5, "ClusterQueue.kueue.x-k8s.io": 2}, CacheSyncTimeout: &timeout}, true)
	want := map[string]int{"Workload.kueue.x-k8s.io": 4, "Job.batch": 5, "Pod": 4, "ClusterQueue.kueue.x-k8s.io": 2}
	for gk, n := range want {
		if got.GroupKindConcurrency[gk] != n {
			t.Errorf("%s: %d workers, want %d", gk, got.GroupKindConcurrency[gk], n)
		}
	}
	if got.CacheSyncTimeout != timeout || !*got.SkipNameValidation {
		t.Errorf("controller config = %+v", got)
	}
	if defaultConcurrency["Job.batch"] != 4 {
		t.Error("the configuration changed the defaults")
	}
}

func TestResourcePolicyOf(t *testing.T) {
	if resourcePolicyOf(nil) != nil || resourcePolicyOf(&configapi.Resources{}) != nil {
		t.Error("no resources section: requests count as they are")
	}
	replace := configapi.Replace
	p := resourcePolicyOf(&configapi.Resources{ExcludeResourcePrefixes: []string{"a/"}, Transformations: []configapi.ResourceTransformation{
		{Input: "x/in", Strategy: &replace, Outputs: corev1.ResourceList{"x/out": resource.MustParse("2")}},
		{Input: "y/in", Strategy: ptr.To(configapi.Retain)}}})
	got := p.Apply(workload.Requests{"a/b": 1, "x/in": 3, "y/in": 1})
	if len(got) != 2 || got["x/out"] != 6 || got["y/in"] != 1 {
		t.Errorf("applied = %v", got)
	}
}

func TestRetentionOf(t *testing.T) {
	if retentionOf(nil) != nil || retentionOf(&configapi.ObjectRetentionPolicies{Workloads: &configapi.WorkloadRetentionPolicy{}}) != nil {
		t.Error("no retention set: keep everything")
	}
	r := retentionOf(&configapi.ObjectRetentionPolicies{Workloads: &configapi.WorkloadRetentionPolicy{AfterFinished: &metav1.Duration{Duration: time.Hour}}})
	if r == nil || *r.AfterFinished != time.Hour || r.AfterDeactivated != nil {
		t.Errorf("retention = %+v", r)
	}
}
