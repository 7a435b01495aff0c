package quota

import (
	"math"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestWeightedShare(t *testing.T) {
	mem := FlavorResource{Flavor: "default", Resource: corev1.ResourceMemory}
	spot := FlavorResource{Flavor: "spot", Resource: corev1.ResourceCPU}
	two := map[FlavorResource]Limits{cpu: {Nominal: 4000}, mem: {Nominal: 8}}
	cases := []struct {
		name   string
		a, b   map[FlavorResource]Limits
		weight int64
		usage  Amounts
		want   int64
	}{
		{name: "within nominal", a: lim(4000, nil, nil), b: lim(4000, nil, nil), weight: 1000, usage: Amounts{cpu: 4000}, want: 0},
		{name: "borrows a quarter of what the cohort can lend", a: lim(4000, nil, nil), b: lim(4000, nil, nil), weight: 1000, usage: Amounts{cpu: 6000}, want: 250},
		{name: "weight 2 halves it", a: lim(4000, nil, nil), b: lim(4000, nil, nil), weight: 2000, usage: Amounts{cpu: 6000}, want: 125},
		{name: "weight 0.5 doubles it", a: lim(4000, nil, nil), b: lim(4000, nil, nil), weight: 500, usage: Amounts{cpu: 6000}, want: 500},
		{name: "weight 0 borrowing is infinite", a: lim(4000, nil, nil), b: lim(4000, nil, nil), weight: 0, usage: Amounts{cpu: 4500}, want: math.MaxInt64},
		{name: "weight 0 within nominal is 0", a: lim(4000, nil, nil), b: lim(4000, nil, nil), weight: 0, usage: Amounts{cpu: 1000}, want: 0},
		{name: "dominant resource", a: two, b: two, weight: 1000, usage: Amounts{cpu: 5000, mem: 12}, want: 250},
		{name: "flavors of a resource add up", a: map[FlavorResource]Limits{cpu: {Nominal: 2000}, spot: {Nominal: 2000}},
			b: map[FlavorResource]Limits{cpu: {Nominal: 2000}, spot: {Nominal: 2000}}, weight: 1000,
			usage: Amounts{cpu: 3000, spot: 3000}, want: 250},
		{name: "a lending limit keeps part out of the pool", a: lim(4000, nil, nil), b: lim(4000, nil, p(0)), weight: 1000,
			usage: Amounts{cpu: 5000}, want: 250},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			co := NewNode("co", false, nil)
			a, b := NewNode("a", true, tc.a), NewNode("b", true, tc.b)
			a.Weight = tc.weight
			Attach(co, a)
			Attach(co, b)
			Finalize(co)
			a.ChargeAll(tc.usage, 1)
			if got := a.WeightedShare(); got != tc.want {
				t.Errorf("share %d, want %d", got, tc.want)
			}
			if got := co.WeightedShare(); got != 0 {
				t.Errorf("the root's share %d, want 0", got)
			}
		})
	}
}

// In a three-level tree a cohort's share is what its subtree borrows from
// its parent's pool, whatever queue inside borrows it.
func TestWeightedShareOfACohort(t *testing.T) {
	root := NewNode("root", false, nil)
	left, right := NewNode("left", false, nil), NewNode("right", false, nil)
	a, b := NewNode("a", true, lim(2000, nil, nil)), NewNode("b", true, lim(2000, nil, nil))
	c := NewNode("c", true, lim(4000, nil, nil))
	Attach(root, left)
	Attach(root, right)
	Attach(left, a)
	Attach(left, b)
	Attach(right, c)
	Finalize(root)
	a.Charge(cpu, 6000) // 2 of its own, 2 of b's, 2 of c's
	if got := a.WeightedShare(); got != 500 {
		t.Errorf("a's share %d, want 500 (4 borrowed of the 8 left could make available)", got)
	}
	if got := left.WeightedShare(); got != 250 {
		t.Errorf("left's share %d, want 250 (2 of root's 8)", got)
	}
	if got := right.WeightedShare(); got != 0 {
		t.Errorf("right's share %d, want 0", got)
	}
}
