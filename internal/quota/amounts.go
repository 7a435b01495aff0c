package quota

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// FlavorResource names one cell of a quota table.
type FlavorResource struct {
	Flavor   string
	Resource corev1.ResourceName
}

// Amounts are exact quantities per flavor and resource, in the canonical
// unit of each resource (see ToAmount).
type Amounts map[FlavorResource]int64

// Add adds other into a.
func (a Amounts) Add(other Amounts) {
	for fr, v := range other {
		a[fr] += v
	}
}

// Sub subtracts other from a, dropping cells that reach zero so that a
// running total does not keep every cell it ever had.
func (a Amounts) Sub(other Amounts) {
	for fr, v := range other {
		if a[fr] -= v; a[fr] == 0 {
			delete(a, fr)
		}
	}
}

// ToAmount converts a quantity to sluice's exact integer unit for the
// resource: thousandths of a core for cpu, whole units (rounded up) for
// everything else, as Kubernetes accounts them.
func ToAmount(name corev1.ResourceName, q resource.Quantity) int64 {
	if name == corev1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

// ToQuantity converts an amount back to a quantity of the resource.
func ToQuantity(name corev1.ResourceName, v int64) resource.Quantity {
	switch name {
	case corev1.ResourceCPU:
		return *resource.NewMilliQuantity(v, resource.DecimalSI)
	case corev1.ResourceMemory, corev1.ResourceEphemeralStorage, corev1.ResourceStorage:
		return *resource.NewQuantity(v, resource.BinarySI)
	default:
		return *resource.NewQuantity(v, resource.DecimalSI)
	}
}

// Format renders an amount as a quantity string, e.g. "1500m" or "4Gi".
func Format(name corev1.ResourceName, v int64) string {
	q := ToQuantity(name, v)
	return q.String()
}
