package quota

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

var cpu = FlavorResource{Flavor: "default", Resource: corev1.ResourceCPU}

func lim(nominal int64, borrowing, lending *int64) map[FlavorResource]Limits {
	return map[FlavorResource]Limits{cpu: {Nominal: nominal, BorrowingLimit: borrowing, LendingLimit: lending}}
}

func p(v int64) *int64 { return &v }

// tree: cohort "co" (pool 0 unless given) with ClusterQueues a and b, and an
// optional parent cohort "root" holding cohort co and a queue c.
type treeSpec struct {
	a, b           map[FlavorResource]Limits
	cohortPool     map[FlavorResource]Limits
	withRoot       bool
	rootPool       map[FlavorResource]Limits
	c              map[FlavorResource]Limits
	usageA, usageB int64
	usageC         int64
}

func build(s treeSpec) (a, b, c *Node) {
	co := NewNode("co", false, s.cohortPool)
	a = NewNode("a", true, s.a)
	b = NewNode("b", true, s.b)
	Attach(co, a)
	Attach(co, b)
	root := co
	if s.withRoot {
		root = NewNode("root", false, s.rootPool)
		c = NewNode("c", true, s.c)
		Attach(root, co)
		Attach(root, c)
	}
	Finalize(root)
	a.Charge(cpu, s.usageA)
	b.Charge(cpu, s.usageB)
	if c != nil {
		c.Charge(cpu, s.usageC)
	}
	return a, b, c
}

func TestAvailable(t *testing.T) {
	cases := []struct {
		name                        string
		spec                        treeSpec
		wantA, wantB                int64
		wantPotentialA, wantBorrowA int64
	}{
		{name: "idle cohort lends everything",
			spec:  treeSpec{a: lim(10, nil, nil), b: lim(10, nil, nil)},
			wantA: 20, wantB: 20, wantPotentialA: 20},
		{name: "a borrows from b",
			spec:  treeSpec{a: lim(10, nil, nil), b: lim(10, nil, nil), usageA: 12},
			wantA: 8, wantB: 8, wantPotentialA: 20, wantBorrowA: 2},
		{name: "lending limit keeps quota back",
			spec:  treeSpec{a: lim(10, nil, nil), b: lim(10, nil, p(4)), usageA: 12},
			wantA: 2, wantB: 8, wantPotentialA: 14, wantBorrowA: 2},
		{name: "borrowing limit caps the borrower",
			spec:  treeSpec{a: lim(10, p(1), nil), b: lim(10, nil, nil), usageA: 10},
			wantA: 1, wantB: 10, wantPotentialA: 11},
		{name: "borrowing limit zero",
			spec:  treeSpec{a: lim(10, p(0), nil), b: lim(10, nil, nil), usageA: 3},
			wantA: 7, wantB: 17, wantPotentialA: 10},
		{name: "over quota after a quota change",
			spec:  treeSpec{a: lim(4, p(0), nil), b: lim(0, nil, nil), usageA: 6},
			wantA: 0, wantB: 0, wantPotentialA: 4, wantBorrowA: 2},
		{name: "cohort pool",
			spec:  treeSpec{a: lim(0, nil, nil), b: lim(0, nil, nil), cohortPool: lim(6, nil, nil), usageB: 2},
			wantA: 4, wantB: 4, wantPotentialA: 6},
		{name: "two levels with a pool on the parent",
			spec: treeSpec{a: lim(2, nil, nil), b: lim(2, nil, nil), withRoot: true, rootPool: lim(10, nil, nil),
				c: lim(4, nil, nil), usageC: 5},
			// root subtree 10 + co(4) + c(4) = 18; c draws 5; left 13.
			wantA: 13, wantB: 13, wantPotentialA: 18},
		{name: "cohort lending limit to its parent",
			spec: treeSpec{a: lim(4, nil, nil), b: lim(4, nil, nil), cohortPool: lim(0, nil, p(2)), withRoot: true,
				rootPool: lim(0, nil, nil), c: lim(0, nil, nil)},
			wantA: 8, wantB: 8, wantPotentialA: 8},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, b, c := build(tc.spec)
			if got := a.Available(cpu); got != tc.wantA {
				t.Errorf("available(a) = %d, want %d", got, tc.wantA)
			}
			if got := b.Available(cpu); got != tc.wantB {
				t.Errorf("available(b) = %d, want %d", got, tc.wantB)
			}
			if got := a.Potential(cpu); got != tc.wantPotentialA {
				t.Errorf("potential(a) = %d, want %d", got, tc.wantPotentialA)
			}
			if got := a.Borrowed(cpu); got != tc.wantBorrowA {
				t.Errorf("borrowed(a) = %d, want %d", got, tc.wantBorrowA)
			}
			if tc.name == "cohort lending limit to its parent" {
				// co lends at most 2 of its 8 to root: c can get 2.
				if got := c.Available(cpu); got != 2 {
					t.Errorf("available(c) = %d, want 2", got)
				}
			}
		})
	}
}

func TestChargeAndReleaseAreSymmetric(t *testing.T) {
	a, b, _ := build(treeSpec{a: lim(10, nil, p(5)), b: lim(10, p(3), nil), withRoot: true, rootPool: lim(2, nil, nil), c: lim(1, nil, nil)})
	before := []int64{a.Available(cpu), b.Available(cpu)}
	for _, delta := range []int64{7, 4, 9, 1} {
		a.Charge(cpu, delta)
		b.Charge(cpu, delta/2)
	}
	for _, delta := range []int64{7, 4, 9, 1} {
		a.Charge(cpu, -delta)
		b.Charge(cpu, -delta/2)
	}
	if after := []int64{a.Available(cpu), b.Available(cpu)}; after[0] != before[0] || after[1] != before[1] {
		t.Errorf("available after charge+release %v, before %v", after, before)
	}
	if a.Parent.Usage(cpu) != 0 || a.Parent.Parent.Usage(cpu) != 0 {
		t.Errorf("pools not released: %d, %d", a.Parent.Usage(cpu), a.Parent.Parent.Usage(cpu))
	}
}

func TestAmounts(t *testing.T) {
	cases := []struct {
		name corev1.ResourceName
		in   string
		want int64
		out  string
	}{
		{corev1.ResourceCPU, "1500m", 1500, "1500m"},
		{corev1.ResourceCPU, "2", 2000, "2"},
		{corev1.ResourceMemory, "1Gi", 1 << 30, "1Gi"},
		{corev1.ResourceMemory, "1.5Gi", 3 << 29, "1536Mi"},
		{"nvidia.com/gpu", "8", 8, "8"},
		{corev1.ResourcePods, "0.5", 1, "1"},
	}
	for _, tc := range cases {
		got := ToAmount(tc.name, resource.MustParse(tc.in))
		if got != tc.want {
			t.Errorf("ToAmount(%s, %s) = %d, want %d", tc.name, tc.in, got, tc.want)
		}
		if s := Format(tc.name, got); s != tc.out {
			t.Errorf("Format(%s, %d) = %s, want %s", tc.name, got, s, tc.out)
		}
	}
}
