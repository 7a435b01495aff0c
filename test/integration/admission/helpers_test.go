package admission

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/test/integration/framework"
)

func namespace(t *testing.T, labels map[string]string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cluster.Unique("ns"), Labels: labels}}
	cluster.MustCreate(t, ns)
	return ns.Name
}

func flavor(name string, labels map[string]string, taints ...corev1.Taint) *kueue.ResourceFlavor {
	return &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: kueue.ResourceFlavorSpec{NodeLabels: labels, NodeTaints: taints}}
}

// fq is the cpu quota of one flavor.
type fq struct {
	flavor    string
	nominal   string
	borrowing *string
	lending   *string
}

func cpuGroup(quotas ...fq) []kueue.ResourceGroup {
	rg := kueue.ResourceGroup{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU}}
	for _, q := range quotas {
		r := kueue.ResourceQuota{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse(q.nominal)}
		if q.borrowing != nil {
			r.BorrowingLimit = ptr.To(resource.MustParse(*q.borrowing))
		}
		if q.lending != nil {
			r.LendingLimit = ptr.To(resource.MustParse(*q.lending))
		}
		rg.Flavors = append(rg.Flavors, kueue.FlavorQuotas{Name: kueue.ResourceFlavorReference(q.flavor), Resources: []kueue.ResourceQuota{r}})
	}
	return []kueue.ResourceGroup{rg}
}

func clusterQueue(name, cohort string, quotas ...fq) *kueue.ClusterQueue {
	return &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kueue.ClusterQueueSpec{
		CohortName: kueue.CohortReference(cohort), NamespaceSelector: &metav1.LabelSelector{}, ResourceGroups: cpuGroup(quotas...)}}
}

func localQueue(ns, name, cq string) *kueue.LocalQueue {
	return &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(cq)}}
}

// newWorkload asks for count pods of cpu each.
func newWorkload(ns, name, lq string, priority int32, count int32, cpu string) *kueue.Workload {
	return &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: kueue.WorkloadSpec{
		QueueName: kueue.LocalQueueName(lq),
		Priority:  ptr.To(priority),
		PodSets: []kueue.PodSet{{Name: "main", Count: count, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "main", Image: "busybox",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}},
		}}}},
	}}
}

func get(t *testing.T, wl *kueue.Workload) *kueue.Workload {
	t.Helper()
	out := &kueue.Workload{}
	if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(wl), out); err != nil {
		t.Fatal(err)
	}
	return out
}

// reserved tells whether the workload holds quota: reserved and not
// finished (a finished workload keeps its admission in status).
func reserved(wl *kueue.Workload) bool {
	return wl.Status.Admission != nil && meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved) &&
		!meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished)
}

// waitAdmitted waits until every workload is admitted and returns them.
func waitAdmitted(t *testing.T, wls ...*kueue.Workload) {
	t.Helper()
	for _, wl := range wls {
		framework.Eventually(t, wl.Name+" to be admitted", func(ctx context.Context) (bool, error) {
			current := &kueue.Workload{}
			if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(wl), current); err != nil {
				return false, err
			}
			if reserved(current) && meta.IsStatusConditionTrue(current.Status.Conditions, kueue.WorkloadAdmitted) {
				*wl = *current
				return true, nil
			}
			return false, fmt.Errorf("conditions: %v", current.Status.Conditions)
		})
	}
}

// waitPending waits until the workload has QuotaReserved=False with the
// reason and a message containing every part, and returns it.
func waitPending(t *testing.T, wl *kueue.Workload, reason string, parts ...string) *kueue.Workload {
	t.Helper()
	var current *kueue.Workload
	framework.Eventually(t, fmt.Sprintf("%s to wait with %s", wl.Name, reason), func(ctx context.Context) (bool, error) {
		current = &kueue.Workload{}
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(wl), current); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(current.Status.Conditions, kueue.WorkloadQuotaReserved)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != reason {
			return false, fmt.Errorf("QuotaReserved: %+v", c)
		}
		for _, p := range parts {
			if !strings.Contains(c.Message, p) {
				return false, fmt.Errorf("message %q lacks %q", c.Message, p)
			}
		}
		return true, nil
	})
	return current
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

// admittedNow lists which of the workloads hold a reservation right now.
func admittedNow(t *testing.T, wls ...*kueue.Workload) []string {
	t.Helper()
	var out []string
	for _, wl := range wls {
		if reserved(get(t, wl)) {
			out = append(out, wl.Name)
		}
	}
	return out
}

// nextSecond waits until the wall clock is past the creation second of
// obj, so that the next object's creationTimestamp is strictly later.
func nextSecond(t *testing.T, obj client.Object) {
	t.Helper()
	framework.Eventually(t, "the clock to pass "+obj.GetName()+"'s creation second", func(context.Context) (bool, error) {
		return time.Now().Truncate(time.Second).After(obj.GetCreationTimestamp().Time), nil
	})
}

func quantity(s string) resource.Quantity { return resource.MustParse(s) }

// waitActive waits until a ClusterQueue is Active, which also means that
// admission has taken it into account.
func waitActive(t *testing.T, cq *kueue.ClusterQueue) {
	t.Helper()
	framework.Eventually(t, cq.Name+" to be active", func(ctx context.Context) (bool, error) {
		current := &kueue.ClusterQueue{}
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(cq), current); err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(current.Status.Conditions, kueue.ConditionActive), nil
	})
}
