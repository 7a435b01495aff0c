package quota

import (
	"slices"
	"testing"
)

func TestAncestors(t *testing.T) {
	tree := func(parents map[string]string) ParentFunc {
		return func(c string) (string, bool) {
			p, ok := parents[c]
			return p, ok
		}
	}
	cases := []struct {
		name      string
		parents   map[string]string
		start     string
		wantChain []string
		wantCycle []string
	}{
		{name: "no cohort", start: "", parents: nil},
		{name: "implicit cohort", start: "a", parents: nil, wantChain: []string{"a"}},
		{name: "root object", start: "a", parents: map[string]string{"a": ""}, wantChain: []string{"a"}},
		{name: "two levels", start: "a", parents: map[string]string{"a": "b", "b": ""}, wantChain: []string{"a", "b"}},
		{name: "missing parent is implicit", start: "a", parents: map[string]string{"a": "ghost"}, wantChain: []string{"a", "ghost"}},
		{name: "self parent", start: "a", parents: map[string]string{"a": "a"}, wantChain: []string{"a"}, wantCycle: []string{"a"}},
		{name: "two-cycle", start: "a", parents: map[string]string{"a": "b", "b": "a"}, wantChain: []string{"a", "b"}, wantCycle: []string{"a", "b"}},
		{name: "chain into a cycle", start: "x", parents: map[string]string{"x": "a", "a": "b", "b": "c", "c": "a"},
			wantChain: []string{"x", "a", "b", "c"}, wantCycle: []string{"a", "b", "c"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Ancestors(tc.start, tree(tc.parents))
			if !slices.Equal(got.Chain, tc.wantChain) {
				t.Errorf("chain = %v, want %v", got.Chain, tc.wantChain)
			}
			if !slices.Equal(got.Cycle, tc.wantCycle) {
				t.Errorf("cycle = %v, want %v", got.Cycle, tc.wantCycle)
			}
			if got.HasCycle() != (len(tc.wantCycle) > 0) {
				t.Errorf("HasCycle = %v", got.HasCycle())
			}
		})
	}
}
