package apply

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/cache"
	"github.com/sluicehq/sluice/internal/metrics"
	"github.com/sluicehq/sluice/internal/quota"
	"github.com/sluicehq/sluice/internal/workload"
)

// MetricsState is what the kueue_* gauges report, read from the cache and
// the queues as the queue statuses are. Per-LocalQueue series are reported
// for the LocalQueues localQueue accepts (nil: none); the per-flavor
// resource series only with resources (metrics.enableClusterQueueResources,
// off by default as in Kueue: one series per queue, flavor and resource).
func (t *Tracker) MetricsState(role string, localQueue func(*kueue.LocalQueue) bool, resources bool) metrics.State {
	byCQ, byLQ := t.Cache.Usages()
	lqToCQ := t.Cache.LocalQueueKeys()
	pending, parked := t.Queues.Waiting()
	type waiting struct{ active, inadmissible int }
	byQueue := map[string]*waiting{}
	count := func(key string, inadmissible bool) {
		w := byQueue[key]
		if w == nil {
			w = &waiting{}
			byQueue[key] = w
		}
		if inadmissible {
			w.inadmissible++
		} else {
			w.active++
		}
	}
	// What the waiting workloads request, per ClusterQueue and resource.
	requested := map[string]map[corev1.ResourceName]int64{}
	for i, list := range [][]*workload.Info{pending, parked} {
		for _, info := range list {
			lq := info.Namespace + "/" + info.LocalQueue
			count("lq/"+lq, i == 1)
			cq, ok := lqToCQ[lq]
			if !ok {
				continue
			}
			count("cq/"+cq, i == 1)
			if !resources {
				continue
			}
			if requested[cq] == nil {
				requested[cq] = map[corev1.ResourceName]int64{}
			}
			for _, ps := range info.PodSets {
				for name, v := range ps.PerPod {
					requested[cq][name] = quota.AddSat(requested[cq][name], quota.MulSat(v, int64(ps.Count)))
				}
			}
		}
	}
	get := func(key string) waiting {
		if w := byQueue[key]; w != nil {
			return *w
		}
		return waiting{}
	}
	finishedCQ, finishedLQ := t.FinishedCounts()
	cqShares, cohortShares := t.Cache.WeightedShares()
	parents := t.Cache.CohortParents()
	parentOf := func(c string) (string, bool) { p, ok := parents[c]; return p, ok }
	root := func(cohort string) string {
		if cohort == "" {
			return ""
		}
		chain := quota.Ancestors(cohort, parentOf).Chain
		return chain[len(chain)-1]
	}

	state := metrics.State{Role: role}
	for _, name := range t.Cache.ClusterQueueNames() {
		obj, active, ok := t.Cache.ClusterQueueState(name)
		if !ok {
			continue
		}
		w := get("cq/" + name)
		reserving, admitted := counts(byCQ[name])
		cohort := string(obj.Spec.CohortName)
		cq := metrics.ClusterQueue{Name: name, Cohort: cohort, ParentCohort: cohort, RootCohort: root(cohort),
			Status: metrics.StatusPending, PendingActive: w.active, PendingInadmissible: w.inadmissible,
			Reserving: int(reserving), Admitted: int(admitted), Finished: finishedCQ[name], WeightedShare: shareOf(cqShares, name)}
		if resources {
			cq.Resources = resourceFigures(obj, byCQ[name], true)
			cq.PendingResources = pendingFigures(obj, requested[name])
		}
		switch {
		case obj.DeletionTimestamp != nil:
			cq.Status = metrics.StatusTerminating
		case active:
			cq.Status = metrics.StatusActive
		}
		state.ClusterQueues = append(state.ClusterQueues, cq)
	}
	var cohortQuotas map[string][]kueue.ResourceGroup
	if resources {
		cohortQuotas = t.Cache.CohortResourceGroups()
	}
	for name, parent := range parents {
		co := metrics.Cohort{Name: name, ParentCohort: parent, RootCohort: root(name), WeightedShare: shareOf(cohortShares, name)}
		for _, rg := range cohortQuotas[name] {
			for _, f := range rg.Flavors {
				for _, r := range f.Resources {
					co.Quota = append(co.Quota, metrics.Resource{Flavor: string(f.Name), Resource: string(r.Name), Nominal: r.NominalQuota.AsApproximateFloat64()})
				}
			}
		}
		state.Cohorts = append(state.Cohorts, co)
	}
	if localQueue == nil {
		return state
	}
	for key, cqName := range lqToCQ {
		lqObj, ok := t.Cache.LocalQueue(key)
		if !ok || !localQueue(lqObj) {
			continue
		}
		w := get("lq/" + key)
		reserving, admitted := counts(byLQ[key])
		lq := metrics.LocalQueue{Namespace: lqObj.Namespace, Name: lqObj.Name, ClusterQueue: cqName,
			PendingActive: w.active, PendingInadmissible: w.inadmissible, Reserving: int(reserving), Admitted: int(admitted),
			Finished: finishedLQ[key], Active: conditionStatus(lqObj.Status.Conditions, kueue.ConditionActive)}
		if cq, ok := t.Cache.ClusterQueue(cqName); ok && resources {
			lq.Resources = resourceFigures(cq, byLQ[key], false)
		}
		state.LocalQueues = append(state.LocalQueues, lq)
	}
	return state
}

// resourceFigures are the queue's flavors and resources with what u holds;
// with limits, the ClusterQueue's quotas and limits too.
func resourceFigures(cq *kueue.ClusterQueue, u *cache.Usage, limits bool) []metrics.Resource {
	var reserved, used quota.Amounts
	if u != nil {
		reserved, used = u.Reserved, u.Admitted
	}
	value := func(name corev1.ResourceName, v int64) float64 {
		q := quota.ToQuantity(name, v)
		return q.AsApproximateFloat64()
	}
	var out []metrics.Resource
	for _, rg := range cq.Spec.ResourceGroups {
		for _, f := range rg.Flavors {
			for _, r := range f.Resources {
				fr := quota.FlavorResource{Flavor: string(f.Name), Resource: r.Name}
				m := metrics.Resource{Flavor: string(f.Name), Resource: string(r.Name), Reserved: value(r.Name, reserved[fr]), Used: value(r.Name, used[fr])}
				if limits {
					m.Nominal = r.NominalQuota.AsApproximateFloat64()
					if r.BorrowingLimit != nil {
						v := r.BorrowingLimit.AsApproximateFloat64()
						m.BorrowingLimit = &v
					}
					if r.LendingLimit != nil {
						v := r.LendingLimit.AsApproximateFloat64()
						m.LendingLimit = &v
					}
				}
				out = append(out, m)
			}
		}
	}
	return out
}

// pendingFigures are the requests of a ClusterQueue's waiting workloads
// for each resource it covers (0 when none waits), as Kueue reports them.
func pendingFigures(cq *kueue.ClusterQueue, requested map[corev1.ResourceName]int64) map[string]float64 {
	out := map[string]float64{}
	for _, rg := range cq.Spec.ResourceGroups {
		for _, name := range rg.CoveredResources {
			q := quota.ToQuantity(name, requested[name])
			out[string(name)] = q.AsApproximateFloat64()
		}
	}
	return out
}

func shareOf(shares map[string]int64, name string) *int64 {
	if shares == nil {
		return nil
	}
	v := shares[name]
	return &v
}

func conditionStatus(conditions []metav1.Condition, t string) string {
	if c := meta.FindStatusCondition(conditions, t); c != nil {
		return string(c.Status)
	}
	return "Unknown"
}
