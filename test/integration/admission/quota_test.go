package admission

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// Acceptance 3: namespaceSelector null admits from no namespace, {} from
// all, a label selector from matching ones; the rejected workload says why.
func TestNamespaceSelector(t *testing.T) {
	teamA := namespace(t, map[string]string{"team": "a"})
	teamB := namespace(t, map[string]string{"team": "b"})
	rf := cluster.Unique("rf")
	cluster.MustCreate(t, flavor(rf, nil))
	cases := []struct {
		name     string
		selector *metav1.LabelSelector
		admitted map[string]bool
	}{
		{"null selects none", nil, map[string]bool{teamA: false, teamB: false}},
		{"empty selects all", &metav1.LabelSelector{}, map[string]bool{teamA: true, teamB: true}},
		{"labels select matching", &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}, map[string]bool{teamA: true, teamB: false}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cqName := cluster.Unique("cq")
			cq := clusterQueue(cqName, "", fq{flavor: rf, nominal: "10"})
			cq.Spec.NamespaceSelector = tc.selector
			cluster.MustCreate(t, cq)
			for ns, want := range tc.admitted {
				lq := cluster.Unique("lq")
				cluster.MustCreate(t, localQueue(ns, lq, cqName))
				wl := newWorkload(ns, cluster.Unique("wl"), lq, 0, 1, "1")
				cluster.MustCreate(t, wl)
				if want {
					waitAdmitted(t, wl)
				} else {
					waitPending(t, wl, kueue.ReasonPending, fmt.Sprintf("namespace %s is not selected by the namespaceSelector of ClusterQueue %s", ns, cqName))
				}
			}
		})
	}
}

// Acceptance 4: a queue borrows idle quota of its cohort up to its
// borrowingLimit; a lendingLimit keeps quota back; a two-level cohort tree
// with a pool on the parent cohort.
func TestBorrowingAndLending(t *testing.T) {
	rf := cluster.Unique("rf")
	cluster.MustCreate(t, flavor(rf, nil))

	t.Run("borrowing limit", func(t *testing.T) {
		ns, cohort := namespace(t, nil), cluster.Unique("cohort")
		borrower, lender := cluster.Unique("cq"), cluster.Unique("cq")
		cluster.MustCreate(t, clusterQueue(borrower, cohort, fq{flavor: rf, nominal: "4", borrowing: ptr.To("2")}),
			clusterQueue(lender, cohort, fq{flavor: rf, nominal: "10"}), localQueue(ns, "lq", borrower))
		var wls []*kueue.Workload
		for i := range 3 {
			wls = append(wls, newWorkload(ns, fmt.Sprintf("w%d", i), "lq", 0, 2, "1"))
		}
		cluster.MustCreate(t, wls[0], wls[1], wls[2])
		waitAdmitted(t, wls...)
		over := newWorkload(ns, "over", "lq", 0, 1, "1")
		cluster.MustCreate(t, over)
		waitPending(t, over, kueue.ReasonWaitingForQuota, "requests 1, available 0 of nominal 4, 6 in use")
		cq := &kueue.ClusterQueue{}
		framework.Eventually(t, "the queue status to show 2 borrowed", func(ctx context.Context) (bool, error) {
			if err := cluster.Client.Get(ctx, client.ObjectKey{Name: borrower}, cq); err != nil {
				return false, err
			}
			if len(cq.Status.FlavorsReservation) != 1 {
				return false, fmt.Errorf("flavorsReservation %v", cq.Status.FlavorsReservation)
			}
			r := cq.Status.FlavorsReservation[0].Resources[0]
			return r.Total.Equal(resource.MustParse("6")) && r.Borrowed.Equal(resource.MustParse("2")) &&
				cq.Status.ReservingWorkloads == 3 && cq.Status.PendingWorkloads == 1, nil
		})
	})

	t.Run("lending limit", func(t *testing.T) {
		ns, cohort := namespace(t, nil), cluster.Unique("cohort")
		keeper, other := cluster.Unique("cq"), cluster.Unique("cq")
		cluster.MustCreate(t, clusterQueue(keeper, cohort, fq{flavor: rf, nominal: "6", lending: ptr.To("2")}),
			clusterQueue(other, cohort, fq{flavor: rf, nominal: "0"}), localQueue(ns, "lq", other))
		fits := newWorkload(ns, "fits", "lq", 0, 2, "1")
		cluster.MustCreate(t, fits)
		waitAdmitted(t, fits)
		kept := newWorkload(ns, "kept", "lq", 0, 1, "1")
		cluster.MustCreate(t, kept)
		waitPending(t, kept, kueue.ReasonWaitingForQuota, "available 0 of nominal 0, 2 in use, cohort can lend 0")
	})

	t.Run("two-level tree with a pool on the parent", func(t *testing.T) {
		ns, parent, child := namespace(t, nil), cluster.Unique("parent"), cluster.Unique("child")
		pool := &kueue.Cohort{ObjectMeta: metav1.ObjectMeta{Name: parent}, Spec: kueue.CohortSpec{ResourceGroups: cpuGroup(fq{flavor: rf, nominal: "4"})}}
		mid := &kueue.Cohort{ObjectMeta: metav1.ObjectMeta{Name: child}, Spec: kueue.CohortSpec{ParentName: kueue.CohortReference(parent)}}
		leaf, sibling := cluster.Unique("cq"), cluster.Unique("cq")
		cluster.MustCreate(t, pool, mid,
			clusterQueue(leaf, child, fq{flavor: rf, nominal: "1"}),
			clusterQueue(sibling, parent, fq{flavor: rf, nominal: "1"}),
			localQueue(ns, "leaf", leaf), localQueue(ns, "sibling", sibling))
		// The leaf reaches the parent's pool through its own cohort: 1 + 4 + 1.
		big := newWorkload(ns, "big", "leaf", 0, 6, "1")
		cluster.MustCreate(t, big)
		waitAdmitted(t, big)
		late := newWorkload(ns, "late", "sibling", 0, 1, "1")
		cluster.MustCreate(t, late)
		waitPending(t, late, kueue.ReasonWaitingForQuota, "available 0 of nominal 1")
		finish(t, big)
		waitAdmitted(t, late)
		if err := framework.CheckQuotaInvariant(context.Background(), cluster.Client); err != nil {
			t.Fatal(err)
		}
	})
}

// Acceptance 5: taints and node labels steer workloads to the right flavor;
// the second flavor is used when the first is full; TryNextFlavor avoids
// borrowing when a later flavor fits.
func TestFlavorAssignment(t *testing.T) {
	ns := namespace(t, nil)
	spot, onDemand, extra := cluster.Unique("spot"), cluster.Unique("on-demand"), cluster.Unique("extra")
	cluster.MustCreate(t,
		flavor(spot, map[string]string{"instance": "spot"}, corev1.Taint{Key: "spot", Value: "true", Effect: corev1.TaintEffectNoSchedule}),
		flavor(onDemand, map[string]string{"instance": "on-demand"}),
		flavor(extra, map[string]string{"instance": "extra"}))
	cqName := cluster.Unique("cq")
	cluster.MustCreate(t, clusterQueue(cqName, "", fq{flavor: spot, nominal: "2"}, fq{flavor: onDemand, nominal: "2"}, fq{flavor: extra, nominal: "4"}),
		localQueue(ns, "lq", cqName))

	flavorOf := func(wl *kueue.Workload) string {
		return string(get(t, wl).Status.Admission.PodSetAssignments[0].Flavors[corev1.ResourceCPU])
	}
	plain := newWorkload(ns, "plain", "lq", 0, 1, "1")
	tolerant := newWorkload(ns, "tolerant", "lq", 0, 1, "1")
	tolerant.Spec.PodSets[0].Template.Spec.Tolerations = []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	pinned := newWorkload(ns, "pinned", "lq", 0, 1, "1")
	pinned.Spec.PodSets[0].Template.Spec.Tolerations = tolerant.Spec.PodSets[0].Template.Spec.Tolerations
	pinned.Spec.PodSets[0].Template.Spec.NodeSelector = map[string]string{"instance": "extra"}
	cluster.MustCreate(t, plain, tolerant, pinned)
	waitAdmitted(t, plain, tolerant, pinned)
	for wl, want := range map[*kueue.Workload]string{plain: onDemand, tolerant: spot, pinned: extra} {
		if got := flavorOf(wl); got != want {
			t.Errorf("%s got flavor %s, want %s", wl.Name, got, want)
		}
	}
	// on-demand has 1 left: a 2-cpu workload goes on to the next flavor.
	spill := newWorkload(ns, "spill", "lq", 0, 2, "1")
	cluster.MustCreate(t, spill)
	waitAdmitted(t, spill)
	if got := flavorOf(spill); got != extra {
		t.Errorf("spill got flavor %s, want %s (on-demand is full)", got, extra)
	}

	t.Run("TryNextFlavor avoids borrowing", func(t *testing.T) {
		ns, cohort := namespace(t, nil), cluster.Unique("cohort")
		for _, policy := range []kueue.FlavorFungibilityPolicy{kueue.MayStopSearch, kueue.TryNextFlavor} {
			cqName, lender := cluster.Unique("cq"), cluster.Unique("cq")
			cq := clusterQueue(cqName, cohort, fq{flavor: onDemand, nominal: "1"}, fq{flavor: extra, nominal: "4"})
			cq.Spec.FlavorFungibility = &kueue.FlavorFungibility{WhenCanBorrow: policy, WhenCanPreempt: kueue.TryNextFlavor}
			lenderCQ := clusterQueue(lender, cohort, fq{flavor: onDemand, nominal: "4"})
			cluster.MustCreate(t, cq, lenderCQ, localQueue(ns, cqName, cqName))
			// The choice depends on what the lender can lend: wait until
			// admission knows it.
			waitActive(t, lenderCQ)
			wl := newWorkload(ns, cluster.Unique("wl"), cqName, 0, 2, "1")
			cluster.MustCreate(t, wl)
			waitAdmitted(t, wl)
			want := map[kueue.FlavorFungibilityPolicy]string{kueue.MayStopSearch: onDemand, kueue.TryNextFlavor: extra}[policy]
			if got := flavorOf(wl); got != want {
				t.Errorf("%s: flavor %s, want %s", policy, got, want)
			}
		}
	})
}

// Acceptance 6: every creation order of ResourceFlavor, ClusterQueue,
// LocalQueue and Workload ends in admission.
func TestEveryCreationOrderAdmits(t *testing.T) {
	kinds := []string{"flavor", "clusterqueue", "localqueue", "workload"}
	for _, order := range permutations(kinds) {
		t.Run(fmt.Sprint(order), func(t *testing.T) {
			t.Parallel()
			ns := namespace(t, nil)
			rf, cq := cluster.Unique("rf"), cluster.Unique("cq")
			objs := map[string]client.Object{
				"flavor":       flavor(rf, nil),
				"clusterqueue": clusterQueue(cq, "", fq{flavor: rf, nominal: "1"}),
				"localqueue":   localQueue(ns, "lq", cq),
				"workload":     newWorkload(ns, "wl", "lq", 0, 1, "1"),
			}
			for _, kind := range order {
				cluster.MustCreate(t, objs[kind])
			}
			waitAdmitted(t, objs["workload"].(*kueue.Workload))
		})
	}
}

func permutations(items []string) [][]string {
	if len(items) <= 1 {
		return [][]string{append([]string(nil), items...)}
	}
	var out [][]string
	for i := range items {
		rest := append(append([]string(nil), items[:i]...), items[i+1:]...)
		for _, p := range permutations(rest) {
			out = append(out, append([]string{items[i]}, p...))
		}
	}
	return out
}
