package plugin

import (
	"bytes"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

func TestBar(t *testing.T) {
	q := resource.MustParse
	for _, tc := range []struct {
		used, nominal string
		want          string
	}{
		{"0", "4", "[....................]"},
		{"2", "4", "[##########..........]"},
		{"4", "4", "[####################]"},
		{"6", "4", "[####################]+"},
		{"500m", "0", "[####################]+"},
		{"0", "0", "[....................]"},
	} {
		if got := bar(q(tc.used), q(tc.nominal)); got != tc.want {
			t.Errorf("bar(%s, %s) = %s, want %s", tc.used, tc.nominal, got, tc.want)
		}
	}
}

// The view groups queues by cohort, queues without one last, each
// flavor's resources with a bar, the numbers, and the queue's counts.
func TestRenderTop(t *testing.T) {
	cq := func(name, cohort, nominal, used string, pending int32) kueue.ClusterQueue {
		c := kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kueue.ClusterQueueSpec{CohortName: kueue.CohortReference(cohort),
			ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{"cpu"}, Flavors: []kueue.FlavorQuotas{{Name: "default",
				Resources: []kueue.ResourceQuota{{Name: "cpu", NominalQuota: resource.MustParse(nominal)}}}}}}}}
		c.Status.FlavorsReservation = []kueue.FlavorUsage{{Name: "default", Resources: []kueue.ResourceUsage{{Name: "cpu", Total: resource.MustParse(used)}}}}
		c.Status.PendingWorkloads = pending
		return c
	}
	var out bytes.Buffer
	renderTop(&out, []kueue.ClusterQueue{cq("solo", "", "1", "0", 0), cq("team-b", "shared", "4", "4", 3), cq("team-a", "shared", "4", "1", 0)}, time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	text := out.String()
	shared, solo := strings.Index(text, "COHORT shared"), strings.Index(text, "NO COHORT")
	a, b := strings.Index(text, "team-a"), strings.Index(text, "team-b")
	if shared < 0 || solo < shared || a < shared || b < a || solo < b {
		t.Fatalf("order of cohorts and queues:\n%s", text)
	}
	for _, want := range []string{"[#####...............]  1/4", "[####################]  4/4", "12:00:00"} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
}
