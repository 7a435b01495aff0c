package framework

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// The builders and waits below are shared by the suites that drive
// admission with bare Workloads and cpu-only queues.

// CPUQuota is the cpu quota of one flavor; nil limits are unset.
type CPUQuota struct {
	Flavor    string
	Nominal   string
	Borrowing *string
	Lending   *string
}

// Flavor is a ResourceFlavor with node labels and taints.
func Flavor(name string, labels map[string]string, taints ...corev1.Taint) *kueue.ResourceFlavor {
	return &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: kueue.ResourceFlavorSpec{NodeLabels: labels, NodeTaints: taints}}
}

// CPUGroup is one resource group covering cpu with the flavors in order.
func CPUGroup(quotas ...CPUQuota) []kueue.ResourceGroup {
	rg := kueue.ResourceGroup{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU}}
	for _, q := range quotas {
		r := kueue.ResourceQuota{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse(q.Nominal)}
		if q.Borrowing != nil {
			r.BorrowingLimit = ptr.To(resource.MustParse(*q.Borrowing))
		}
		if q.Lending != nil {
			r.LendingLimit = ptr.To(resource.MustParse(*q.Lending))
		}
		rg.Flavors = append(rg.Flavors, kueue.FlavorQuotas{Name: kueue.ResourceFlavorReference(q.Flavor), Resources: []kueue.ResourceQuota{r}})
	}
	return []kueue.ResourceGroup{rg}
}

// ClusterQueue serves every namespace with cpu quotas, in cohort ("" for
// none).
func ClusterQueue(name, cohort string, quotas ...CPUQuota) *kueue.ClusterQueue {
	return &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kueue.ClusterQueueSpec{
		CohortName: kueue.CohortReference(cohort), NamespaceSelector: &metav1.LabelSelector{}, ResourceGroups: CPUGroup(quotas...)}}
}

// LocalQueue points ns/name at a ClusterQueue.
func LocalQueue(ns, name, cq string) *kueue.LocalQueue {
	return &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(cq)}}
}

// Workload asks for count pods of cpu each.
func Workload(ns, name, lq string, priority int32, count int32, cpu string) *kueue.Workload {
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

// Reserved tells whether the workload holds quota: reserved and not
// finished (a finished workload keeps its admission in status).
func Reserved(wl *kueue.Workload) bool {
	return wl.Status.Admission != nil && meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved) &&
		!meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished)
}

// Namespace creates a namespace with a unique name.
func (c *Cluster) Namespace(t testing.TB, labels map[string]string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.Unique("ns"), Labels: labels}}
	c.MustCreate(t, ns)
	return ns.Name
}

// DeleteWorkloads deletes a namespace's Workloads and waits until they are
// gone. A test that makes a thousand, run again by -count on the same API
// server, would otherwise leave them to every later cluster-wide list (the
// quota invariant's, twice a second), each run slower than the last.
func (c *Cluster) DeleteWorkloads(t testing.TB, ns string) {
	t.Helper()
	if err := c.Client.DeleteAllOf(context.Background(), &kueue.Workload{}, client.InNamespace(ns)); err != nil {
		t.Fatalf("deleting the Workloads of %s: %v", ns, err)
	}
	Eventually(t, "the Workloads of "+ns+" to be gone", func(ctx context.Context) (bool, error) {
		list := &kueue.WorkloadList{}
		if err := c.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		if n := len(list.Items); n > 0 {
			return false, fmt.Errorf("%d remain", n)
		}
		return true, nil
	})
}

// WaitAdmitted waits until every workload is admitted, and updates them.
func (c *Cluster) WaitAdmitted(t testing.TB, wls ...*kueue.Workload) {
	t.Helper()
	for _, wl := range wls {
		Eventually(t, wl.Name+" to be admitted", func(ctx context.Context) (bool, error) {
			current := &kueue.Workload{}
			if err := c.Client.Get(ctx, client.ObjectKeyFromObject(wl), current); err != nil {
				return false, err
			}
			if Reserved(current) && meta.IsStatusConditionTrue(current.Status.Conditions, kueue.WorkloadAdmitted) {
				*wl = *current
				return true, nil
			}
			return false, fmt.Errorf("conditions: %v", current.Status.Conditions)
		})
	}
}

// WaitPending waits until the workload has QuotaReserved=False with the
// reason and a message containing every part, and returns it.
func (c *Cluster) WaitPending(t testing.TB, wl *kueue.Workload, reason string, parts ...string) *kueue.Workload {
	t.Helper()
	var current *kueue.Workload
	Eventually(t, fmt.Sprintf("%s to wait with %s", wl.Name, reason), func(ctx context.Context) (bool, error) {
		current = &kueue.Workload{}
		if err := c.Client.Get(ctx, client.ObjectKeyFromObject(wl), current); err != nil {
			return false, err
		}
		cond := meta.FindStatusCondition(current.Status.Conditions, kueue.WorkloadQuotaReserved)
		if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != reason {
			return false, fmt.Errorf("QuotaReserved: %+v", cond)
		}
		for _, p := range parts {
			if !strings.Contains(cond.Message, p) {
				return false, fmt.Errorf("message %q lacks %q", cond.Message, p)
			}
		}
		return true, nil
	})
	return current
}

// WaitActive waits until a ClusterQueue is Active, which also means that
// admission has taken it into account.
func (c *Cluster) WaitActive(t testing.TB, cqs ...*kueue.ClusterQueue) {
	t.Helper()
	for _, cq := range cqs {
		Eventually(t, cq.Name+" to be active", func(ctx context.Context) (bool, error) {
			current := &kueue.ClusterQueue{}
			if err := c.Client.Get(ctx, client.ObjectKeyFromObject(cq), current); err != nil {
				return false, err
			}
			return meta.IsStatusConditionTrue(current.Status.Conditions, kueue.ConditionActive), nil
		})
	}
}

// WaitPreempted waits until wl is evicted by preemption with the Preempted
// reason, its reservation released, and returns its Preempted condition.
func (c *Cluster) WaitPreempted(t testing.TB, wl *kueue.Workload, reason string) *metav1.Condition {
	t.Helper()
	var preempted *metav1.Condition
	Eventually(t, fmt.Sprintf("%s to be preempted (%s)", wl.Name, reason), func(ctx context.Context) (bool, error) {
		current := &kueue.Workload{}
		if err := c.Client.Get(ctx, client.ObjectKeyFromObject(wl), current); err != nil {
			return false, err
		}
		evicted := meta.FindStatusCondition(current.Status.Conditions, kueue.WorkloadEvicted)
		preempted = meta.FindStatusCondition(current.Status.Conditions, kueue.WorkloadPreempted)
		if evicted == nil || evicted.Reason != kueue.EvictedByPreemption || preempted == nil || preempted.Reason != reason || current.Status.Admission != nil {
			return false, fmt.Errorf("evicted %+v, preempted %+v, admission %v", evicted, preempted, current.Status.Admission)
		}
		return true, nil
	})
	return preempted
}

// ReservedNow lists which of the workloads hold a reservation right now.
func (c *Cluster) ReservedNow(t testing.TB, wls ...*kueue.Workload) []string {
	t.Helper()
	var out []string
	for _, wl := range wls {
		current := &kueue.Workload{}
		if err := c.Client.Get(context.Background(), client.ObjectKeyFromObject(wl), current); err != nil {
			t.Fatal(err)
		}
		if Reserved(current) {
			out = append(out, wl.Name)
		}
	}
	return out
}

// NewQueue creates a namespace (named from prefix) with LocalQueue "lq" in
// front of a ClusterQueue of its own with cpu quota in one flavor, whose
// nodes are labelled pool=<flavor>, and waits until the ClusterQueue is
// active. It returns the namespace and the flavor's name.
func (c *Cluster) NewQueue(t testing.TB, prefix, cpu string) (namespace, flavor string) {
	t.Helper()
	namespace, flavor = c.Unique(prefix), c.Unique("flavor")
	cq := ClusterQueue(c.Unique("cq"), "", CPUQuota{Flavor: flavor, Nominal: cpu})
	c.MustCreate(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, Flavor(flavor, map[string]string{"pool": flavor}), cq,
		LocalQueue(namespace, "lq", cq.Name))
	c.WaitActive(t, cq)
	return namespace, flavor
}
