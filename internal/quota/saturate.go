package quota

import (
	"math"
	"math/bits"
)

// Amounts are int64 and come from user input (a pod's requests times its
// count, sums over thousands of workloads). Plain arithmetic wraps on
// overflow, and a wrapped sum is negative: a workload asking for more than
// int64 can hold would then "fit" and make room for everything after it.
// Every sum and product of amounts goes through these helpers instead,
// which stop at the int64 bounds; an amount at the bound never fits
// anywhere (no quota can be that large, see MaxQuantity).

// AddSat is a+b, stopping at the int64 bounds instead of wrapping.
func AddSat(a, b int64) int64 {
	s := a + b
	// Overflow happened iff both operands have the sign the sum lacks.
	if (a >= 0) == (b >= 0) && (s >= 0) != (a >= 0) {
		if a >= 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return s
}

// SubSat is a-b, stopping at the int64 bounds instead of wrapping.
func SubSat(a, b int64) int64 {
	if b == math.MinInt64 {
		if a >= 0 {
			return math.MaxInt64
		}
		return a - b
	}
	return AddSat(a, -b)
}

// MulSat is a*b, stopping at the int64 bounds instead of wrapping.
func MulSat(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	negative := (a < 0) != (b < 0)
	hi, lo := bits.Mul64(absUint(a), absUint(b))
	if hi != 0 || lo > math.MaxInt64 {
		if negative {
			return math.MinInt64
		}
		return math.MaxInt64
	}
	if negative {
		return -int64(lo)
	}
	return int64(lo)
}

func absUint(v int64) uint64 {
	if v < 0 {
		return uint64(-(v + 1)) + 1
	}
	return uint64(v)
}

// MulDiv is a*b/c for non-negative a and b and positive c, computed
// without overflowing in the product and stopping at MaxInt64. It returns
// MaxInt64 for c <= 0 and 0 for a negative operand.
func MulDiv(a, b, c int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	if c <= 0 {
		return math.MaxInt64
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, uint64(c))
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}

// MulDivUp is MulDiv rounded up: a request computed from a fraction of a
// unit counts as the whole unit, never as nothing.
func MulDivUp(a, b, c int64) int64 {
	q := MulDiv(a, b, c)
	if q == 0 && a > 0 && b > 0 {
		return 1
	}
	if q == math.MaxInt64 || a <= 0 || b <= 0 {
		return q
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if _, rem := bits.Div64(hi, lo, uint64(c)); rem != 0 {
		return AddSat(q, 1)
	}
	return q
}
