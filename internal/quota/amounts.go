package quota

import (
	"fmt"
	"math"
	"strings"

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
// request: negative, beyond MaxQuantity, or with more digits than a
// float64 can place. It returns "" when it is fine.
func CheckQuantity(q resource.Quantity) string {
	tooLarge := fmt.Sprintf("must be at most %s (what sluice can count in thousandths of a unit)", MaxQuantity.String())
	switch sizeOf(q) {
	case negative:
		return "must be greater than or equal to 0"
	case huge:
		return tooLarge
	case unreadable:
		return "has more digits than sluice can count: write it with fewer"
	case ordinary:
		if q.Cmp(MaxQuantity) > 0 {
			return tooLarge
		}
	}
	return ""
}

// ToAmount converts a quantity to sluice's exact integer unit for the
// resource: thousandths of a core for cpu, whole units (rounded up) for
// everything else, as Kubernetes accounts them. A negative quantity counts
// as 0, one too large for int64 (or unreadable) as MaxInt64, and a
// positive one too small to see as 1 (rounded up): never a wrapped value.
// The webhooks refuse the out-of-range ones; this is the last line.
func ToAmount(name corev1.ResourceName, q resource.Quantity) int64 {
	switch sizeOf(q) {
	case negative, zero:
		return 0
	case tiny:
		return 1
	case huge, unreadable:
		return math.MaxInt64
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

// size sorts quantities by magnitude, cheaply.
type size int

const (
	negative size = iota
	zero
	tiny // positive, below a thousandth
	ordinary
	huge // beyond any int64 amount
	unreadable
)

// sizeOf tells a quantity's magnitude from its float64 approximation,
// which costs the same whatever its exponent. Exact comparisons and
// scaled values of a quantity the API accepts, like 1e50525050, build
// numbers of millions of digits and take seconds (fuzzing found it): they
// are used only on ordinary sizes, where the exponent is small.
func sizeOf(q resource.Quantity) size {
	f := q.AsApproximateFloat64()
	switch {
	case math.IsNaN(f):
		// A mantissa beyond float64 times an exponent that takes it back.
		return unreadable
	case f < 0:
		return negative
	case f == 0:
		if q.Sign() > 0 {
			return tiny // so small that float64 underflows
		}
		return zero
	case f < 1e-3:
		return tiny
	case f > 1e20: // int64 holds 9.2e18 whole units
		return huge
	}
	return ordinary
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

// SlowToParse tells a quantity string whose exponent has more than four
// digits. apimachinery's ParseQuantity takes seconds on some of them
// (1e-50525050: about 19 s, in its own code, for the API server too); the
// fuzz targets skip them to spend their time on sluice's code.
func SlowToParse(s string) bool {
	i := strings.IndexAny(s, "eE")
	if i < 0 {
		return false
	}
	digits := strings.TrimLeft(s[i+1:], "+-")
	return len(digits) > 4
}
