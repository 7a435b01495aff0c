package metrics

import "github.com/sluicehq/sluice/internal/quota"

// flavorResource keys the subtree sums.
type flavorResource struct{ flavor, resource string }

// subtree is what a cohort's subtree holds: its own quota and that of
// every cohort and ClusterQueue below it, their reservations, and the
// admitted workloads of its ClusterQueues.
type subtree struct {
	admitted        int
	quota, reserved map[flavorResource]float64
}

// subtrees sums each cohort's subtree from the State: every ClusterQueue
// and cohort counts in its own cohort and in each one above it. A cycle
// (which the cohort controller reports) stops the walk where it closes.
func subtrees(s State) map[string]*subtree {
	parent := map[string]string{}
	for _, co := range s.Cohorts {
		parent[co.Name] = co.ParentCohort
	}
	out := map[string]*subtree{}
	get := func(name string) *subtree {
		t := out[name]
		if t == nil {
			t = &subtree{quota: map[flavorResource]float64{}, reserved: map[flavorResource]float64{}}
			out[name] = t
		}
		return t
	}
	parentOf := func(c string) (string, bool) { p, ok := parent[c]; return p, ok }
	// up calls add for cohort and each cohort above it.
	up := func(cohort string, add func(*subtree)) {
		for _, c := range quota.Ancestors(cohort, parentOf).Chain {
			add(get(c))
		}
	}
	for _, co := range s.Cohorts {
		get(co.Name)
		up(co.Name, func(t *subtree) {
			for _, r := range co.Quota {
				t.quota[flavorResource{r.Flavor, r.Resource}] += r.Nominal
			}
		})
	}
	for _, cq := range s.ClusterQueues {
		up(cq.Cohort, func(t *subtree) {
			t.admitted += cq.Admitted
			for _, r := range cq.Resources {
				k := flavorResource{r.Flavor, r.Resource}
				t.quota[k] += r.Nominal
				t.reserved[k] += r.Reserved
			}
		})
	}
	return out
}
