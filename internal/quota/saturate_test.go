package quota

import (
	"math"
	"math/big"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// clamp is the exact result of an operation, stopped at the int64 bounds.
func clamp(v *big.Int) int64 {
	if v.Cmp(big.NewInt(math.MaxInt64)) > 0 {
		return math.MaxInt64
	}
	if v.Cmp(big.NewInt(math.MinInt64)) < 0 {
		return math.MinInt64
	}
	return v.Int64()
}

func TestSaturatingArithmetic(t *testing.T) {
	const maxI, minI = math.MaxInt64, math.MinInt64
	cases := []struct {
		name      string
		got, want int64
	}{
		{"add in range", AddSat(2, 3), 5},
		{"add saturates up", AddSat(maxI, 1), maxI},
		{"add saturates down", AddSat(minI, -1), minI},
		{"add of opposite signs never saturates", AddSat(maxI, minI), -1},
		{"sub in range", SubSat(2, 3), -1},
		{"sub of MinInt64 saturates", SubSat(0, minI), maxI},
		{"sub saturates down", SubSat(minI, 1), minI},
		{"mul in range", MulSat(-4, 5), -20},
		{"mul saturates up: 3 pods of 4Ei", MulSat(4<<60, 3), maxI},
		{"mul saturates down", MulSat(maxI, -2), minI},
		{"mul of MinInt64 by -1", MulSat(minI, -1), maxI},
		{"mulDiv without overflow in the product", MulDiv(maxI, 1000, 2000), maxI / 2},
		{"mulDiv saturates", MulDiv(maxI, 3, 2), maxI},
		{"mulDiv by zero", MulDiv(1, 1, 0), maxI},
	}
	for _, tc := range cases {
		if tc.got != tc.want {
			t.Errorf("%s: got %d, want %d", tc.name, tc.got, tc.want)
		}
	}
}

func TestToAmountNeverWraps(t *testing.T) {
	cases := []struct {
		name     corev1.ResourceName
		quantity string
		want     int64
	}{
		{corev1.ResourceCPU, "1500m", 1500},
		{corev1.ResourceMemory, "4Gi", 4 << 30},
		{corev1.ResourceMemory, "4Ei", 4 << 60},
		{corev1.ResourceMemory, "100Ei", math.MaxInt64},
		{corev1.ResourceCPU, "9223372036854775807", math.MaxInt64},
		{corev1.ResourceCPU, "1e300", math.MaxInt64},
		{corev1.ResourceCPU, "-2", 0},
		// Exponents the API accepts: answered at once, not in seconds.
		{corev1.ResourceCPU, "1e50525050", math.MaxInt64},
		{corev1.ResourceMemory, "1.5e50525050", math.MaxInt64},
		{corev1.ResourceMemory, "-1e50525050", 0},
	}
	for _, tc := range cases {
		if got := ToAmount(tc.name, resource.MustParse(tc.quantity)); got != tc.want {
			t.Errorf("ToAmount(%s, %s) = %d, want %d", tc.name, tc.quantity, got, tc.want)
		}
	}
	for _, q := range []string{"-1", "9223372036854776", "10Ei", "1e50525050", "-1e50525050"} {
		if CheckQuantity(resource.MustParse(q)) == "" {
			t.Errorf("CheckQuantity(%s) accepted it", q)
		}
	}
	for _, q := range []string{"0", "8Pi", "9223372036854775", "1e-50"} {
		if why := CheckQuantity(resource.MustParse(q)); why != "" {
			t.Errorf("CheckQuantity(%s) refused it: %s", q, why)
		}
	}
}

// FuzzSaturatingArithmetic compares the helpers with exact big-integer
// arithmetic clamped to int64.
func FuzzSaturatingArithmetic(f *testing.F) {
	f.Add(int64(math.MaxInt64), int64(1), int64(1))
	f.Add(int64(math.MinInt64), int64(-1), int64(3))
	f.Add(int64(4<<60), int64(3), int64(7))
	f.Fuzz(func(t *testing.T, a, b, c int64) {
		x, y := big.NewInt(a), big.NewInt(b)
		if got, want := AddSat(a, b), clamp(new(big.Int).Add(x, y)); got != want {
			t.Fatalf("AddSat(%d, %d) = %d, want %d", a, b, got, want)
		}
		if got, want := SubSat(a, b), clamp(new(big.Int).Sub(x, y)); got != want {
			t.Fatalf("SubSat(%d, %d) = %d, want %d", a, b, got, want)
		}
		if got, want := MulSat(a, b), clamp(new(big.Int).Mul(x, y)); got != want {
			t.Fatalf("MulSat(%d, %d) = %d, want %d", a, b, got, want)
		}
		if a >= 0 && b >= 0 && c > 0 {
			want := clamp(new(big.Int).Quo(new(big.Int).Mul(x, y), big.NewInt(c)))
			if got := MulDiv(a, b, c); got != want {
				t.Fatalf("MulDiv(%d, %d, %d) = %d, want %d", a, b, c, got, want)
			}
		}
	})
}

// FuzzTreeChargeAvailable builds a cohort of two queues from fuzzed limits
// and charges fuzzed amounts, each only within what Available allows (as
// the scheduler does), then releases them. Usage never goes negative or
// beyond a queue's bound, Available stays within [0, Potential], and
// releasing everything gives every node back its empty state.
func FuzzTreeChargeAvailable(f *testing.F) {
	f.Add(int64(10), int64(10), int64(-1), int64(-1), []byte{3, 7, 200, 1})
	f.Add(int64(math.MaxInt64), int64(math.MaxInt64), int64(math.MaxInt64), int64(5), []byte{255, 255, 255})
	f.Fuzz(func(t *testing.T, nominalA, nominalB, borrowingA, lendingB int64, charges []byte) {
		nominalA, nominalB = max(0, nominalA), max(0, nominalB)
		var borrowing, lending *int64
		if borrowingA >= 0 {
			borrowing = &borrowingA
		}
		if lendingB >= 0 {
			lendingB = min(lendingB, nominalB)
			lending = &lendingB
		}
		co := NewNode("co", false, nil)
		a := NewNode("a", true, lim(nominalA, borrowing, nil))
		b := NewNode("b", true, lim(nominalB, nil, lending))
		Attach(co, a)
		Attach(co, b)
		Finalize(co)
		type charge struct {
			node   *Node
			amount int64
		}
		var done []charge
		for i, c := range charges {
			node := []*Node{a, b}[i%2]
			avail := node.Available(cpu)
			if avail < 0 || avail > node.Potential(cpu) {
				t.Fatalf("%s: available %d outside [0, potential %d]", node.Name, avail, node.Potential(cpu))
			}
			// A fraction of what is available, or far beyond it.
			amount := MulDiv(avail, int64(c), 128)
			if amount > avail || amount <= 0 {
				continue
			}
			node.Charge(cpu, amount)
			done = append(done, charge{node, amount})
			for _, n := range []*Node{a, b, co} {
				if n.Usage(cpu) < 0 {
					t.Fatalf("%s: usage %d is negative", n.Name, n.Usage(cpu))
				}
			}
			if borrowing != nil && a.Usage(cpu) > AddSat(nominalA, *borrowing) {
				t.Fatalf("a uses %d beyond nominal %d + borrowing limit %d", a.Usage(cpu), nominalA, *borrowing)
			}
			// What a queue keeps back from lending is not in the cohort's
			// pool: the bound of both together is their nominal quotas.
			if total, bound := AddSat(a.Usage(cpu), b.Usage(cpu)), AddSat(nominalA, nominalB); total > bound {
				t.Fatalf("the cohort's queues use %d beyond their quotas %d", total, bound)
			}
			if co.Usage(cpu) > co.SubtreeQuota(cpu) {
				t.Fatalf("the cohort's pool is used %d beyond its quota %d", co.Usage(cpu), co.SubtreeQuota(cpu))
			}
		}
		for _, d := range slices.Backward(done) {
			d.node.Charge(cpu, -d.amount)
		}
		for _, n := range []*Node{a, b, co} {
			if n.Usage(cpu) != 0 {
				t.Fatalf("%s: usage %d after releasing everything", n.Name, n.Usage(cpu))
			}
		}
	})
}

// SlowToParse is used by the fuzz targets, not by sluice: see its doc.
func TestSlowToParse(t *testing.T) {
	for s, want := range map[string]bool{"1e-50525050": true, "1E+99999": true, "1e9999": false, "4Ei": false, "1.5e-3": false} {
		if got := SlowToParse(s); got != want {
			t.Errorf("SlowToParse(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestMulDivUp(t *testing.T) {
	for _, tc := range []struct{ a, b, c, want int64 }{
		{1, 1, 1000, 1}, {1000, 1, 1000, 1}, {1001, 1, 1000, 2}, {0, 5, 3, 0}, {6, 5, 3, 10},
		{math.MaxInt64, math.MaxInt64, 1, math.MaxInt64}, {-1, 5, 1, 0},
	} {
		if got := MulDivUp(tc.a, tc.b, tc.c); got != tc.want {
			t.Errorf("MulDivUp(%d, %d, %d) = %d, want %d", tc.a, tc.b, tc.c, got, tc.want)
		}
	}
}
