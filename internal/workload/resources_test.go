package workload

import (
	"math"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestResourcePolicyApply(t *testing.T) {
	mig := corev1.ResourceName("nvidia.com/mig-1g.5gb")
	gpuMem := corev1.ResourceName("example.com/gpu-memory")
	perCPU := corev1.ResourceName("example.com/credits")
	cases := []struct {
		name   string
		policy *ResourcePolicy
		in     Requests
		want   Requests
	}{
		{name: "no policy", in: Requests{corev1.ResourceCPU: 500}, want: Requests{corev1.ResourceCPU: 500}},
		{name: "excluded prefix", policy: &ResourcePolicy{ExcludePrefixes: []string{"example.com/"}},
			in: Requests{corev1.ResourceCPU: 500, "example.com/foo": 3, "other.com/bar": 1}, want: Requests{corev1.ResourceCPU: 500, "other.com/bar": 1}},
		{name: "retain", policy: &ResourcePolicy{Transformations: map[corev1.ResourceName]Transformation{
			mig: {Outputs: map[corev1.ResourceName]resource.Quantity{gpuMem: resource.MustParse("5")}}}},
			in: Requests{mig: 2}, want: Requests{mig: 2, gpuMem: 10}},
		{name: "replace", policy: &ResourcePolicy{Transformations: map[corev1.ResourceName]Transformation{
			mig: {Replace: true, Outputs: map[corev1.ResourceName]resource.Quantity{gpuMem: resource.MustParse("5"), corev1.ResourceCPU: resource.MustParse("250m")}}}},
			in: Requests{mig: 2, corev1.ResourceCPU: 1000}, want: Requests{gpuMem: 10, corev1.ResourceCPU: 1500}},
		{name: "replace with no outputs ignores the input", policy: &ResourcePolicy{Transformations: map[corev1.ResourceName]Transformation{
			mig: {Replace: true}}}, in: Requests{mig: 2}, want: Requests{}},
		{name: "multiply by another request", policy: &ResourcePolicy{Transformations: map[corev1.ResourceName]Transformation{
			mig: {MultiplyBy: corev1.ResourceCPU, Outputs: map[corev1.ResourceName]resource.Quantity{gpuMem: resource.MustParse("5")}}}},
			in: Requests{mig: 2, corev1.ResourceCPU: 1500}, want: Requests{mig: 2, corev1.ResourceCPU: 1500, gpuMem: 15}},
		{name: "a fraction of a unit counts whole", policy: &ResourcePolicy{Transformations: map[corev1.ResourceName]Transformation{
			corev1.ResourceCPU: {Outputs: map[corev1.ResourceName]resource.Quantity{perCPU: resource.MustParse("1")}}}},
			in: Requests{corev1.ResourceCPU: 1}, want: Requests{corev1.ResourceCPU: 1, perCPU: 1}},
		{name: "huge numbers saturate", policy: &ResourcePolicy{Transformations: map[corev1.ResourceName]Transformation{
			mig: {Outputs: map[corev1.ResourceName]resource.Quantity{gpuMem: resource.MustParse("1e15")}}}},
			in: Requests{mig: math.MaxInt64 / 2, gpuMem: 5}, want: Requests{mig: math.MaxInt64 / 2, gpuMem: math.MaxInt64}},
		{name: "excluded before transformed", policy: &ResourcePolicy{ExcludePrefixes: []string{"nvidia.com/"}, Transformations: map[corev1.ResourceName]Transformation{
			mig: {Outputs: map[corev1.ResourceName]resource.Quantity{gpuMem: resource.MustParse("5")}}}},
			in: Requests{mig: 2}, want: Requests{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in.clone()
			got := tc.policy.Apply(tc.in)
			if !apiequality.Semantic.DeepEqual(got, tc.want) {
				t.Errorf("Apply = %v, want %v", got, tc.want)
			}
			if !apiequality.Semantic.DeepEqual(tc.in, in) {
				t.Errorf("the input changed: %v, was %v", tc.in, in)
			}
		})
	}
}
