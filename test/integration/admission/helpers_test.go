package admission

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/test/integration/framework"
)

func namespace(t *testing.T, labels map[string]string) string {
	t.Helper()
	return cluster.Namespace(t, labels)
}

func flavor(name string, labels map[string]string, taints ...corev1.Taint) *kueue.ResourceFlavor {
	return framework.Flavor(name, labels, taints...)
}

// fq is the cpu quota of one flavor.
type fq struct {
	flavor    string
	nominal   string
	borrowing *string
	lending   *string
}

func (q fq) quota() framework.CPUQuota {
	return framework.CPUQuota{Flavor: q.flavor, Nominal: q.nominal, Borrowing: q.borrowing, Lending: q.lending}
}

func quotas(fqs []fq) []framework.CPUQuota {
	out := make([]framework.CPUQuota, len(fqs))
	for i, q := range fqs {
		out[i] = q.quota()
	}
	return out
}

func cpuGroup(qs ...fq) []kueue.ResourceGroup { return framework.CPUGroup(quotas(qs)...) }

func clusterQueue(name, cohort string, qs ...fq) *kueue.ClusterQueue {
	return framework.ClusterQueue(name, cohort, quotas(qs)...)
}

func localQueue(ns, name, cq string) *kueue.LocalQueue { return framework.LocalQueue(ns, name, cq) }

func newWorkload(ns, name, lq string, priority int32, count int32, cpu string) *kueue.Workload {
	return framework.Workload(ns, name, lq, priority, count, cpu)
}

func get(t *testing.T, wl *kueue.Workload) *kueue.Workload {
	t.Helper()
	out := &kueue.Workload{}
	if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(wl), out); err != nil {
		t.Fatal(err)
	}
	return out
}

func reserved(wl *kueue.Workload) bool { return framework.Reserved(wl) }

func waitAdmitted(t *testing.T, wls ...*kueue.Workload) {
	t.Helper()
	cluster.WaitAdmitted(t, wls...)
}

func waitPending(t *testing.T, wl *kueue.Workload, reason string, parts ...string) *kueue.Workload {
	t.Helper()
	return cluster.WaitPending(t, wl, reason, parts...)
}

// finish marks a workload Finished, as a job integration would.
func finish(t *testing.T, wl *kueue.Workload) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		current := get(t, wl)
		meta.SetStatusCondition(&current.Status.Conditions, metav1.Condition{
			Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: "Succeeded", Message: "done"})
		return cluster.Client.Status().Update(context.Background(), current)
	})
	if err != nil {
		t.Fatalf("finishing %s: %v", wl.Name, err)
	}
}

func update(t *testing.T, obj client.Object, mutate func()) {
	t.Helper()
	framework.Update(t, cluster.Client, obj, mutate)
}

func admittedNow(t *testing.T, wls ...*kueue.Workload) []string {
	t.Helper()
	return cluster.ReservedNow(t, wls...)
}

// nextSecond waits until the wall clock is past the creation second of
// obj, so that the next object's creationTimestamp is strictly later.
func nextSecond(t *testing.T, obj client.Object) {
	t.Helper()
	pastSecond(t, obj.GetName()+"'s creation", obj.GetCreationTimestamp().Time)
}

// nextAdmissionSecond waits until the wall clock is past the second wl's
// quota was reserved in (conditions keep seconds), so that the next
// admission is strictly more recent.
func nextAdmissionSecond(t *testing.T, wl *kueue.Workload) {
	t.Helper()
	c := meta.FindStatusCondition(get(t, wl).Status.Conditions, kueue.WorkloadQuotaReserved)
	if c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("%s holds no reservation", wl.Name)
	}
	pastSecond(t, wl.Name+"'s admission", c.LastTransitionTime.Time)
}

func pastSecond(t *testing.T, what string, at time.Time) {
	t.Helper()
	framework.Eventually(t, "the clock to pass "+what+" second", func(context.Context) (bool, error) {
		return time.Now().Truncate(time.Second).After(at), nil
	})
}

func quantity(s string) resource.Quantity { return resource.MustParse(s) }

func waitActive(t *testing.T, cq *kueue.ClusterQueue) {
	t.Helper()
	cluster.WaitActive(t, cq)
}
