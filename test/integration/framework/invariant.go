package framework

import (
	"context"
	"errors"
	"fmt"
	"math/big"

	"gopkg.in/inf.v0"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
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
// Sums are exact (resource.Quantity arithmetic, not int64): a checker that
// wrapped around like the code under test would miss exactly the overflow
// bugs it is there to catch.
//
// It works on single-level trees and on trees whose cohorts have no limits
// of their own; that covers the tests that use it.
// ErrRead marks a CheckQuotaInvariant that could not read the cluster (it
// checked nothing), as opposed to one that found a violation.
var ErrRead = errors.New("reading the cluster")

func CheckQuotaInvariant(ctx context.Context, c client.Client) error {
	cqs := &kueue.ClusterQueueList{}
	cohorts := &kueue.CohortList{}
	wls := &kueue.WorkloadList{}
	for _, l := range []client.ObjectList{cqs, cohorts, wls} {
		if err := c.List(ctx, l); err != nil {
			return fmt.Errorf("%w: %w", ErrRead, err)
		}
	}
	type cell struct{ flavor, resource string }
	usage := map[string]map[cell]resource.Quantity{}
	for _, wl := range wls.Items {
		if wl.Status.Admission == nil || !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved) ||
			meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
			continue
		}
		cq := string(wl.Status.Admission.ClusterQueue)
		if usage[cq] == nil {
			usage[cq] = map[cell]resource.Quantity{}
		}
		reclaimable := map[kueue.PodSetReference]int32{}
		for _, rp := range wl.Status.ReclaimablePods {
			reclaimable[rp.Name] = rp.Count
		}
		for _, psa := range wl.Status.Admission.PodSetAssignments {
			for name, q := range psa.ResourceUsage {
				k := cell{string(psa.Flavors[name]), string(name)}
				usage[cq][k] = sum(usage[cq][k], lessReclaimable(q, psa.Count, reclaimable[psa.Name]))
			}
		}
	}
	parent := map[string]string{}
	pool := map[string]map[cell]resource.Quantity{}
	for _, co := range cohorts.Items {
		parent[co.Name] = string(co.Spec.ParentName)
		pool[co.Name] = map[cell]resource.Quantity{}
		for _, rg := range co.Spec.ResourceGroups {
			for _, f := range rg.Flavors {
				for _, r := range f.Resources {
					k := cell{string(f.Name), string(r.Name)}
					pool[co.Name][k] = sum(pool[co.Name][k], r.NominalQuota)
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
	treeCapacity := map[string]map[cell]resource.Quantity{}
	treeUsage := map[string]map[cell]resource.Quantity{}
	add := func(m map[string]map[cell]resource.Quantity, tree string, k cell, v resource.Quantity) {
		if m[tree] == nil {
			m[tree] = map[cell]resource.Quantity{}
		}
		m[tree][k] = sum(m[tree][k], v)
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
					add(treeCapacity, tree, k, r.NominalQuota)
					add(treeUsage, tree, k, used)
					if r.BorrowingLimit != nil {
						if bound := sum(r.NominalQuota, *r.BorrowingLimit); used.Cmp(bound) > 0 {
							return fmt.Errorf("ClusterQueue %s uses %s of %s/%s, above nominal + borrowingLimit = %s", cq.Name, used.String(), k.flavor, k.resource, bound.String())
						}
					}
				}
			}
		}
	}
	for tree, cells := range treeUsage {
		for k, used := range cells {
			if capacity := treeCapacity[tree][k]; used.Cmp(capacity) > 0 {
				return fmt.Errorf("cohort tree %s uses %s of %s/%s, above its quota %s", tree, used.String(), k.flavor, k.resource, capacity.String())
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
					kept := diff(r.NominalQuota, *r.LendingLimit)
					others := diff(treeUsage[tree][k], usage[cq.Name][k])
					if bound := diff(treeCapacity[tree][k], kept); others.Cmp(bound) > 0 {
						return fmt.Errorf("queues beside %s use %s of %s/%s, above what it lends (%s available to them)", cq.Name, others.String(), k.flavor, k.resource, bound.String())
					}
				}
			}
		}
	}
	return nil
}

// sum and diff are exact: Quantity arithmetic doesn't overflow.
func sum(a, b resource.Quantity) resource.Quantity {
	out := a.DeepCopy()
	out.Add(b)
	return out
}

func diff(a, b resource.Quantity) resource.Quantity {
	out := a.DeepCopy()
	out.Sub(b)
	return out
}

// lessReclaimable is a pod set's usage less the share of its pods that are
// done for good (reclaimable): usage - floor(usage*done/count), in exact
// thousandths, as admission counts it.
func lessReclaimable(q resource.Quantity, count *int32, done int32) resource.Quantity {
	n := int64(1)
	if count != nil {
		n = int64(*count)
	}
	if done <= 0 || n <= 0 {
		return q
	}
	milli := new(inf.Dec).Round(q.AsDec(), 3, inf.RoundUp).UnscaledBig()
	share := new(big.Int).Quo(new(big.Int).Mul(milli, big.NewInt(min(int64(done), n))), big.NewInt(n))
	left := new(inf.Dec).SetUnscaledBig(new(big.Int).Sub(milli, share))
	left.SetScale(3)
	return *resource.NewDecimalQuantity(*left, q.Format)
}
