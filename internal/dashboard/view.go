package dashboard

import (
	"cmp"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	visibilityv1beta2 "github.com/sluicehq/sluice/apis/visibility/v1beta2"
)

// recentEvents is how many admissions and evictions the page lists.
const recentEvents = 15

// waitingShown is how many pending workloads of a queue the page lists.
const waitingShown = 10

// View is what the page shows.
type View struct {
	Now     time.Time
	Cohorts []Cohort
	Recent  []Event
}

// Cohort is a cohort's ClusterQueues ("" for those in none).
type Cohort struct {
	Name   string
	Queues []Queue
}

// Queue is one ClusterQueue.
type Queue struct {
	Name              string
	Pending, Admitted int32
	Resources         []Bar
	// Waiting are its first pending workloads, in order; MoreWaiting how
	// many more there are.
	Waiting     []Waiting
	MoreWaiting int
}

// Bar is one flavor and resource of a queue: the nominal quota, what is
// used of it and borrowed beyond it, and what the queue lends.
type Bar struct {
	Flavor, Resource              string
	Nominal, Used, Borrowed, Lent string
	UsedPct, BorrowedPct, LentPct float64
	nominal, used, borrowed, idle float64
}

// Waiting is a pending workload and where it stands.
type Waiting struct {
	Namespace, Name, LocalQueue string
	// Position is its place in the ClusterQueue, from 0; -1 when the
	// visibility API did not say.
	Position        int32
	Reason, Message string
}

// Event is an admission or an eviction.
type Event struct {
	Time                                     time.Time
	What, Namespace, Name, ClusterQueue, Why string
}

// buildView puts the cluster's objects together. pending gives, per
// ClusterQueue, its pending workloads in order from the visibility API
// (absent: not known, the workloads' own list is used, unordered).
func buildView(now time.Time, cqs []kueue.ClusterQueue, lqs []kueue.LocalQueue, wls []kueue.Workload, pending map[string][]visibilityv1beta2.PendingWorkload) View {
	lqToCQ := map[string]string{}
	for _, lq := range lqs {
		lqToCQ[lq.Namespace+"/"+lq.Name] = string(lq.Spec.ClusterQueue)
	}
	reasons := map[string][2]string{}
	waitingIn := map[string][]Waiting{}
	var recent []Event
	for _, wl := range wls {
		key := wl.Namespace + "/" + wl.Name
		if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved); c != nil && c.Status == metav1.ConditionFalse {
			reasons[key] = [2]string{c.Reason, c.Message}
		}
		recent = append(recent, events(&wl)...)
		if isPending(&wl) {
			cq := lqToCQ[wl.Namespace+"/"+string(wl.Spec.QueueName)]
			r := reasons[key]
			waitingIn[cq] = append(waitingIn[cq], Waiting{Namespace: wl.Namespace, Name: wl.Name, LocalQueue: string(wl.Spec.QueueName), Position: -1, Reason: r[0], Message: r[1]})
		}
	}
	slices.SortFunc(recent, func(a, b Event) int { return b.Time.Compare(a.Time) })
	if len(recent) > recentEvents {
		recent = recent[:recentEvents]
	}

	byCohort := map[string][]Queue{}
	for _, cq := range cqs {
		q := Queue{Name: cq.Name, Pending: cq.Status.PendingWorkloads, Admitted: cq.Status.AdmittedWorkloads, Resources: bars(&cq)}
		waiting := waitingIn[cq.Name]
		if ordered, ok := pending[cq.Name]; ok {
			waiting = waiting[:0:0]
			for _, p := range ordered {
				r := reasons[p.Namespace+"/"+p.Name]
				waiting = append(waiting, Waiting{Namespace: p.Namespace, Name: p.Name, LocalQueue: string(p.LocalQueueName),
					Position: p.PositionInClusterQueue, Reason: cmp.Or(p.Reason, r[0]), Message: cmp.Or(p.Message, r[1])})
			}
		}
		if len(waiting) > waitingShown {
			q.MoreWaiting = len(waiting) - waitingShown
			waiting = waiting[:waitingShown]
		}
		q.Waiting = waiting
		byCohort[string(cq.Spec.CohortName)] = append(byCohort[string(cq.Spec.CohortName)], q)
	}
	v := View{Now: now, Recent: recent}
	for name, queues := range byCohort {
		slices.SortFunc(queues, func(a, b Queue) int { return cmp.Compare(a.Name, b.Name) })
		lend(queues)
		v.Cohorts = append(v.Cohorts, Cohort{Name: name, Queues: queues})
	}
	// Cohorts by name, the queues without one last.
	slices.SortFunc(v.Cohorts, func(a, b Cohort) int {
		if (a.Name == "") != (b.Name == "") {
			if a.Name == "" {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return v
}

func isPending(wl *kueue.Workload) bool {
	conds := wl.Status.Conditions
	return !meta.IsStatusConditionTrue(conds, kueue.WorkloadQuotaReserved) && !meta.IsStatusConditionTrue(conds, kueue.WorkloadFinished) &&
		(wl.Spec.Active == nil || *wl.Spec.Active)
}

// events are the workload's admission (quota reserved) and eviction, if
// any.
func events(wl *kueue.Workload) []Event {
	var out []Event
	for _, e := range []struct{ cond, what string }{{kueue.WorkloadQuotaReserved, "Admitted"}, {kueue.WorkloadEvicted, "Evicted"}} {
		c := meta.FindStatusCondition(wl.Status.Conditions, e.cond)
		if c == nil || c.Status != metav1.ConditionTrue {
			continue
		}
		ev := Event{Time: c.LastTransitionTime.Time, What: e.what, Namespace: wl.Namespace, Name: wl.Name}
		if wl.Status.Admission != nil {
			ev.ClusterQueue = string(wl.Status.Admission.ClusterQueue)
		}
		if e.what == "Evicted" {
			ev.Why = c.Reason + ": " + c.Message
		}
		out = append(out, ev)
	}
	return out
}

// bars are the queue's flavors and resources with what is reserved.
func bars(cq *kueue.ClusterQueue) []Bar {
	used := map[string]kueue.ResourceUsage{}
	for _, fu := range cq.Status.FlavorsReservation {
		for _, r := range fu.Resources {
			used[string(fu.Name)+"/"+r.Name] = r
		}
	}
	var out []Bar
	for _, rg := range cq.Spec.ResourceGroups {
		for _, f := range rg.Flavors {
			for _, r := range f.Resources {
				u := used[string(f.Name)+"/"+string(r.Name)]
				b := Bar{Flavor: string(f.Name), Resource: string(r.Name), Nominal: r.NominalQuota.String(), Used: u.Total.String(), Borrowed: u.Borrowed.String(),
					nominal: r.NominalQuota.AsApproximateFloat64(), used: u.Total.AsApproximateFloat64(), borrowed: u.Borrowed.AsApproximateFloat64()}
				idle := max(b.nominal-(b.used-b.borrowed), 0)
				if r.LendingLimit != nil {
					idle = min(idle, r.LendingLimit.AsApproximateFloat64())
				}
				b.idle = idle
				scale := max(b.nominal, b.used, 1e-9)
				b.UsedPct = 100 * (b.used - b.borrowed) / scale
				b.BorrowedPct = 100 * b.borrowed / scale
				out = append(out, b)
			}
		}
	}
	return out
}

// lend estimates what each queue of a cohort lends: the cohort's
// borrowing of a flavor and resource, spread over the queues' idle quota
// of it in proportion (sluice does not record who lent to whom).
func lend(queues []Queue) {
	type key struct{ flavor, resource string }
	borrowed, idle := map[key]float64{}, map[key]float64{}
	for _, q := range queues {
		for _, b := range q.Resources {
			k := key{b.Flavor, b.Resource}
			borrowed[k] += b.borrowed
			idle[k] += b.idle
		}
	}
	for _, q := range queues {
		for i := range q.Resources {
			b := &q.Resources[i]
			k := key{b.Flavor, b.Resource}
			lent := 0.0
			if idle[k] > 0 {
				lent = min(borrowed[k]*b.idle/idle[k], b.idle)
			}
			b.Lent = resource.NewMilliQuantity(int64(lent*1000), resource.DecimalSI).String()
			b.LentPct = 100 * lent / max(b.nominal, b.used, 1e-9)
		}
	}
}
