package quota

import (
	"fmt"
	"math"

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
		a[fr] = AddSat(a[fr], v)
	}
}

// Sub subtracts other from a, dropping cells that reach zero so that a
// running total does not keep every cell it ever had.
func (a Amounts) Sub(other Amounts) {
	for fr, v := range other {
		if a[fr] = SubSat(a[fr], v); a[fr] == 0 {
			delete(a, fr)
		}
	}
}

// MaxQuantity is the largest quantity of any resource that sluice accepts
// in a quota or a request: what int64 can hold in thousandths of a unit
// (about 9.2e15 units, e.g. 8Pi of memory). The webhooks refuse larger
// ones; ToAmount saturates on them.
var MaxQuantity = *resource.NewMilliQuantity(math.MaxInt64, resource.DecimalSI)

// CheckQuantity says what is wrong with a quantity as a quota or a
// request: negative, or beyond MaxQuantity. It returns "" when it is fine.
func CheckQuantity(q resource.Quantity) string {
	switch {
	case q.Sign() < 0:
		return "must be greater than or equal to 0"
	case q.Cmp(MaxQuantity) > 0:
		return fmt.Sprintf("must be at most %s (what sluice can count in thousandths of a unit)", MaxQuantity.String())
	}
	return ""
}

// ToAmount converts a quantity to sluice's exact integer unit for the
// resource: thousandths of a core for cpu, whole units (rounded up) for
// everything else, as Kubernetes accounts them. A negative quantity counts
// as 0 and one too large for int64 as MaxInt64 (never as a wrapped value):
// the webhooks refuse both, this is the last line.
func ToAmount(name corev1.ResourceName, q resource.Quantity) int64 {
	if q.Sign() <= 0 {
		return 0
	}
	if name == corev1.ResourceCPU {
		if q.Cmp(MaxQuantity) > 0 {
			return math.MaxInt64
		}
		return q.MilliValue()
	}
	if q.Cmp(maxWholeQuantity) > 0 {
		return math.MaxInt64
	}
	return q.Value()
}

// maxWholeQuantity is the largest quantity whose Value() fits in int64.
var maxWholeQuantity = *resource.NewQuantity(math.MaxInt64, resource.DecimalSI)

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
