package integration

import (
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
)

var jobGVK = schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}

func TestWorkloadName(t *testing.T) {
	name := WorkloadName(jobGVK, "trainer", "uid-1")
	if !regexp.MustCompile(`^job-trainer-[0-9a-f]{5}$`).MatchString(name) {
		t.Errorf("WorkloadName = %q, want job-trainer-<5 hex>", name)
	}
	if again := WorkloadName(jobGVK, "trainer", "uid-1"); again != name {
		t.Errorf("not stable: %q then %q", name, again)
	}
	differ := []struct {
		what string
		gvk  schema.GroupVersionKind
		n    string
		uid  types.UID
	}{
		{"another UID (the job recreated)", jobGVK, "trainer", "uid-2"},
		{"another kind", schema.GroupVersionKind{Group: "jobset.x-k8s.io", Version: "v1alpha2", Kind: "Job"}, "trainer", "uid-1"},
	}
	for _, d := range differ {
		if other := WorkloadName(d.gvk, d.n, d.uid); other == name {
			t.Errorf("%s gives the same name %q", d.what, other)
		}
	}
	long := WorkloadName(jobGVK, strings.Repeat("a", 250)+".-b", "uid")
	if len(long) > 253 {
		t.Errorf("long name has %d characters, want at most 253", len(long))
	}
	if errs := validation.IsDNS1123Subdomain(long); len(errs) > 0 {
		t.Errorf("long name %q is not a valid object name: %v", long, errs)
	}
	if !strings.HasPrefix(long, "job-aaa") {
		t.Errorf("long name %q lost its prefix", long)
	}
}
