package admission

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// A workload whose requests times count are beyond int64 (3 pods of 4e15
// CPU, each within what the webhook accepts) wrapped negative and was
// admitted, after which everything fit. It must wait as never fitting, and
// the queue's accounting stay exact for the workloads after it.
func TestRequestsBeyondInt64DoNotWrap(t *testing.T) {
	ns := namespace(t, nil)
	rf, cq, lq := cluster.Unique("rf"), cluster.Unique("cq"), cluster.Unique("lq")
	cluster.MustCreate(t, flavor(rf, nil))
	cluster.MustCreate(t, clusterQueue(cq, "", fq{flavor: rf, nominal: "8"}))
	cluster.MustCreate(t, localQueue(ns, lq, cq))

	huge := newWorkload(ns, cluster.Unique("huge"), lq, 0, 3, "4e15")
	cluster.MustCreate(t, huge)
	waitPending(t, huge, kueue.ReasonExceedsMaxQuota)
	fits := newWorkload(ns, cluster.Unique("fits"), lq, 0, 8, "1")
	cluster.MustCreate(t, fits)
	waitAdmitted(t, fits)
	beyond := newWorkload(ns, cluster.Unique("beyond"), lq, 0, 1, "1")
	cluster.MustCreate(t, beyond)
	waitPending(t, beyond, kueue.ReasonWaitingForQuota)
	if got := admittedNow(t, huge, fits, beyond); len(got) != 1 || got[0] != fits.Name {
		t.Fatalf("admitted %v, want only %s", got, fits.Name)
	}
	if err := framework.CheckQuotaInvariant(context.Background(), cluster.Client); err != nil {
		t.Fatal(err)
	}
}

// Amounts sluice can't count exactly (negative, or beyond what int64
// holds in thousandths) are refused with the field named.
func TestAmountsBeyondInt64AreRefused(t *testing.T) {
	ns := namespace(t, nil)
	rf := cluster.Unique("rf")
	cluster.MustCreate(t, flavor(rf, nil))
	cases := []struct {
		name  string
		obj   func() any
		field string
	}{
		{"a nominal quota of 1e16 CPU", func() any { return clusterQueue(cluster.Unique("cq"), "", fq{flavor: rf, nominal: "1e16"}) },
			"spec.resourceGroups[0].flavors[0].resources[0].nominalQuota"},
		{"a Workload requesting 1e16 CPU per pod", func() any { return newWorkload(ns, cluster.Unique("wl"), "lq", 0, 1, "1e16") },
			"spec.podSets[0].template.spec.containers[0].resources.requests[cpu]"},
		{"a Workload requesting negative CPU", func() any { return newWorkload(ns, cluster.Unique("wl"), "lq", 0, 1, "-4") },
			"spec.podSets[0].template.spec.containers[0].resources.requests[cpu]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := tc.obj()
			var err error
			switch o := obj.(type) {
			case *kueue.ClusterQueue:
				err = cluster.Client.Create(context.Background(), o)
			case *kueue.Workload:
				err = cluster.Client.Create(context.Background(), o)
			}
			if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) {
				t.Fatalf("created, or refused for another reason: %v", err)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("error %q does not name %s", err, tc.field)
			}
		})
	}
}

// deleteAndWait deletes obj and waits until it is gone (finalizers done).
func deleteAndWait(t *testing.T, obj client.Object) {
	t.Helper()
	if err := cluster.Client.Delete(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, obj.GetName()+" to be gone", func(ctx context.Context) (bool, error) {
		err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// Queue objects deleted and created again under the same name (at
// generation 1 again) are new objects: the workloads that waited for them
// are admitted at once, not left parked until some unrelated change.
func TestQueueObjectsCreatedAgainUnderTheSameName(t *testing.T) {
	rf := cluster.Unique("rf")
	cluster.MustCreate(t, flavor(rf, nil))

	t.Run("LocalQueue", func(t *testing.T) {
		ns, cq := namespace(t, nil), cluster.Unique("cq")
		cluster.MustCreate(t, clusterQueue(cq, "", fq{flavor: rf, nominal: "4"}), localQueue(ns, "lq", cq))
		first := newWorkload(ns, "first", "lq", 0, 1, "1")
		cluster.MustCreate(t, first)
		waitAdmitted(t, first)
		deleteAndWait(t, localQueue(ns, "lq", cq))
		waiting := newWorkload(ns, "waiting", "lq", 0, 1, "1")
		cluster.MustCreate(t, waiting)
		waitPending(t, waiting, kueue.ReasonPending, "LocalQueue lq doesn't exist")
		cluster.MustCreate(t, localQueue(ns, "lq", cq))
		waitAdmitted(t, waiting)
	})

	t.Run("ClusterQueue", func(t *testing.T) {
		ns, cq := namespace(t, nil), cluster.Unique("cq")
		cluster.MustCreate(t, clusterQueue(cq, "", fq{flavor: rf, nominal: "4"}), localQueue(ns, "lq", cq))
		first := newWorkload(ns, "first", "lq", 0, 1, "1")
		cluster.MustCreate(t, first)
		waitAdmitted(t, first)
		finish(t, first)
		deleteAndWait(t, clusterQueue(cq, "", fq{flavor: rf, nominal: "4"}))
		waiting := newWorkload(ns, "waiting", "lq", 0, 1, "1")
		cluster.MustCreate(t, waiting)
		waitPending(t, waiting, kueue.ReasonPending, "ClusterQueue "+cq+" of LocalQueue lq doesn't exist")
		cluster.MustCreate(t, clusterQueue(cq, "", fq{flavor: rf, nominal: "4"}))
		waitAdmitted(t, waiting)
	})

	t.Run("Cohort", func(t *testing.T) {
		ns, cq, cohort := namespace(t, nil), cluster.Unique("cq"), cluster.Unique("cohort")
		pool := func() *kueue.Cohort {
			return &kueue.Cohort{ObjectMeta: metav1.ObjectMeta{Name: cohort},
				Spec: kueue.CohortSpec{ResourceGroups: cpuGroup(fq{flavor: rf, nominal: "4"})}}
		}
		cluster.MustCreate(t, pool(), clusterQueue(cq, cohort, fq{flavor: rf, nominal: "0"}), localQueue(ns, "lq", cq))
		first := newWorkload(ns, "first", "lq", 0, 1, "1")
		cluster.MustCreate(t, first)
		waitAdmitted(t, first)
		deleteAndWait(t, pool())
		waiting := newWorkload(ns, "waiting", "lq", 0, 1, "1")
		cluster.MustCreate(t, waiting)
		waitPending(t, waiting, kueue.ReasonExceedsMaxQuota)
		cluster.MustCreate(t, pool())
		waitAdmitted(t, waiting)
	})
}
