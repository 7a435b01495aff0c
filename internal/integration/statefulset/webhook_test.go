package statefulset

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestGroupName(t *testing.T) {
	cases := []struct{ name, want string }{
		{"db", "statefulset-db"},
		{strings.Repeat("a", 51), "statefulset-" + strings.Repeat("a", 51)},
	}
	for _, tc := range cases {
		if got := GroupName(tc.name); got != tc.want {
			t.Errorf("GroupName(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
	long, other := GroupName(strings.Repeat("a", 80)), GroupName(strings.Repeat("a", 81))
	if len(long) > 63 || long == other {
		t.Errorf("long names %q and %q: want at most 63 characters and distinct", long, other)
	}
	if errs := validation.IsValidLabelValue(long); len(errs) > 0 {
		t.Errorf("%q is not a label value: %v", long, errs)
	}
}
