package workload

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/sluicehq/sluice/internal/quota"
)

// ResourcePolicy is the configuration's resources section as it changes
// what a pod counts against quota: resources named with an excluded prefix
// do not count, then each transformation turns its input into outputs (per
// unit of input, times MultiplyBy's amount when set) and keeps or drops
// the input. It applies to pending workloads; an admitted one is charged
// what its admission recorded, so a changed policy never alters quota held.
type ResourcePolicy struct {
	ExcludePrefixes []string
	Transformations map[corev1.ResourceName]Transformation
}

// Transformation of one input resource.
type Transformation struct {
	// Replace drops the input; otherwise it still counts.
	Replace    bool
	MultiplyBy corev1.ResourceName
	// Outputs per unit of the input.
	Outputs map[corev1.ResourceName]resource.Quantity
}

// Apply returns the requests as they count (r itself when p is nil).
func (p *ResourcePolicy) Apply(r Requests) Requests {
	if p == nil || (len(p.ExcludePrefixes) == 0 && len(p.Transformations) == 0) {
		return r
	}
	out := make(Requests, len(r))
	for name, v := range r {
		if !p.excluded(name) {
			out[name] = v
		}
	}
	inputs := out.clone()
	for name, v := range inputs {
		t, ok := p.Transformations[name]
		if !ok {
			continue
		}
		if t.Replace {
			delete(out, name)
		}
		// units is the input's amount in whole units (cpu amounts are
		// millis), times the multiplier's.
		factor, divisor := v, unitOf(name)
		if t.MultiplyBy != "" {
			factor = quota.MulSat(factor, inputs[t.MultiplyBy])
			divisor *= unitOf(t.MultiplyBy)
		}
		for outName, perUnit := range t.Outputs {
			add := quota.MulDivUp(quota.ToAmount(outName, perUnit), factor, divisor)
			out[outName] = quota.AddSat(out[outName], add)
		}
	}
	return out
}

func (p *ResourcePolicy) excluded(name corev1.ResourceName) bool {
	for _, prefix := range p.ExcludePrefixes {
		if strings.HasPrefix(string(name), prefix) {
			return true
		}
	}
	return false
}

// unitOf is how many amounts make one unit of a resource: cpu amounts are
// millicores.
func unitOf(name corev1.ResourceName) int64 {
	if name == corev1.ResourceCPU {
		return 1000
	}
	return 1
}
