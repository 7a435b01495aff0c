package framework

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// CheckQuotaInvariant reads every ClusterQueue, Cohort and Workload and
// verifies, with its own arithmetic, that the quota held by workloads with
// QuotaReserved=True that have not finished respects every bound:
//   - a queue uses at most its nominal quota plus its borrowing limit;
//   - the queues of a cohort tree together use at most the tree's quota
//     (their nominal quotas plus the cohorts' pools);
//   - the others in a tree use at most the tree's quota minus what a queue
//     with a lending limit keeps for itself.
//
// It works on single-level trees and on trees whose cohorts have no limits
// of their own; that covers the tests that use it.
func CheckQuotaInvariant(ctx context.Context, c client.Client) error {
	cqs := &kueue.ClusterQueueList{}
	cohorts := &kueue.CohortList{}
	wls := &kueue.WorkloadList{}
	for _, l := range []client.ObjectList{cqs, cohorts, wls} {
		if err := c.List(ctx, l); err != nil {
			return err
		}
	}
	type cell struct{ flavor, resource string }
	usage := map[string]map[cell]int64{}
	for _, wl := range wls.Items {
		if wl.Status.Admission == nil || !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved) ||
			meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
			continue
		}
		cq := string(wl.Status.Admission.ClusterQueue)
		if usage[cq] == nil {
			usage[cq] = map[cell]int64{}
		}
		for _, psa := range wl.Status.Admission.PodSetAssignments {
			for name, q := range psa.ResourceUsage {
				usage[cq][cell{string(psa.Flavors[name]), string(name)}] += q.MilliValue()
			}
		}
	}
	parent := map[string]string{}
	pool := map[string]map[cell]int64{}
	for _, co := range cohorts.Items {
		parent[co.Name] = string(co.Spec.ParentName)
		pool[co.Name] = map[cell]int64{}
		for _, rg := range co.Spec.ResourceGroups {
			for _, f := range rg.Flavors {
				for _, r := range f.Resources {
					pool[co.Name][cell{string(f.Name), string(r.Name)}] += r.NominalQuota.MilliValue()
				}
			}
		}
	}
	root := func(cohort string) string {
		for i := 0; i < 10 && parent[cohort] != ""; i++ {
			cohort = parent[cohort]
		}
		return cohort
	}
	treeCapacity := map[string]map[cell]int64{}
	treeUsage := map[string]map[cell]int64{}
	add := func(m map[string]map[cell]int64, tree string, k cell, v int64) {
		if m[tree] == nil {
			m[tree] = map[cell]int64{}
		}
		m[tree][k] += v
	}
	for name, cells := range pool {
		for k, v := range cells {
			add(treeCapacity, root(name), k, v)
		}
	}
	for _, cq := range cqs.Items {
		tree := "queue/" + cq.Name
		if cq.Spec.CohortName != "" {
			tree = root(string(cq.Spec.CohortName))
		}
		for _, rg := range cq.Spec.ResourceGroups {
			for _, f := range rg.Flavors {
				for _, r := range f.Resources {
					k := cell{string(f.Name), string(r.Name)}
					used := usage[cq.Name][k]
					add(treeCapacity, tree, k, r.NominalQuota.MilliValue())
					add(treeUsage, tree, k, used)
					if r.BorrowingLimit != nil {
						if bound := r.NominalQuota.MilliValue() + r.BorrowingLimit.MilliValue(); used > bound {
							return fmt.Errorf("ClusterQueue %s uses %dm of %s/%s, above nominal + borrowingLimit = %dm", cq.Name, used, k.flavor, k.resource, bound)
						}
					}
				}
			}
		}
	}
	for tree, cells := range treeUsage {
		for k, used := range cells {
			if capacity := treeCapacity[tree][k]; used > capacity {
				return fmt.Errorf("cohort tree %s uses %dm of %s/%s, above its quota %dm", tree, used, k.flavor, k.resource, capacity)
			}
		}
	}
	for _, cq := range cqs.Items {
		if cq.Spec.CohortName == "" {
			continue
		}
		tree := root(string(cq.Spec.CohortName))
		for _, rg := range cq.Spec.ResourceGroups {
			for _, f := range rg.Flavors {
				for _, r := range f.Resources {
					if r.LendingLimit == nil {
						continue
					}
					k := cell{string(f.Name), string(r.Name)}
					kept := r.NominalQuota.MilliValue() - r.LendingLimit.MilliValue()
					others := treeUsage[tree][k] - usage[cq.Name][k]
					if bound := treeCapacity[tree][k] - kept; others > bound {
						return fmt.Errorf("queues beside %s use %dm of %s/%s, above what it lends (%dm available to them)", cq.Name, others, k.flavor, k.resource, bound)
					}
				}
			}
		}
	}
	return nil
}
