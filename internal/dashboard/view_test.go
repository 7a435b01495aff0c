package dashboard

import (
	"bytes"
	"html/template"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	visibilityv1beta2 "github.com/sluicehq/sluice/apis/visibility/v1beta2"
)

var t0 = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)

func clusterQueue(name, cohort, nominal, used, borrowed string) kueue.ClusterQueue {
	q := resource.MustParse
	cq := kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kueue.ClusterQueueSpec{CohortName: kueue.CohortReference(cohort),
		ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{"cpu"}, Flavors: []kueue.FlavorQuotas{{Name: "default",
			Resources: []kueue.ResourceQuota{{Name: "cpu", NominalQuota: q(nominal)}}}}}}}}
	cq.Status.FlavorsReservation = []kueue.FlavorUsage{{Name: "default", Resources: []kueue.ResourceUsage{{Name: "cpu", Total: q(used), Borrowed: q(borrowed)}}}}
	return cq
}

func workload(ns, name, lq string, conds ...metav1.Condition) kueue.Workload {
	return kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: kueue.WorkloadSpec{QueueName: kueue.LocalQueueName(lq)},
		Status: kueue.WorkloadStatus{Conditions: conds}}
}

func cond(t, status, reason, message string, at time.Time) metav1.Condition {
	return metav1.Condition{Type: t, Status: metav1.ConditionStatus(status), Reason: reason, Message: message, LastTransitionTime: metav1.NewTime(at)}
}

// The borrower uses 6 of its 4 CPU (2 borrowed); the idle lender is shown
// lending those 2; the waiting workloads come in the visibility API's
// order with their reasons; recent events newest first.
func TestBuildView(t *testing.T) {
	cqs := []kueue.ClusterQueue{clusterQueue("solo", "", "1", "0", "0"), clusterQueue("borrower", "shared", "4", "6", "2"), clusterQueue("lender", "shared", "4", "0", "0")}
	lqs := []kueue.LocalQueue{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "main"}, Spec: kueue.LocalQueueSpec{ClusterQueue: "borrower"}}}
	wls := []kueue.Workload{
		workload("ns", "running", "main", cond(kueue.WorkloadQuotaReserved, "True", "QuotaReserved", "", t0.Add(-time.Minute))),
		workload("ns", "evicted", "main", cond(kueue.WorkloadEvicted, "True", "Preempted", "to make room", t0.Add(-30*time.Second))),
		workload("ns", "second", "main", cond(kueue.WorkloadQuotaReserved, "False", "WaitingForQuota", "needs 1 cpu", t0)),
		workload("ns", "first", "main"),
	}
	wls[3].Spec.Active = ptr.To(true)
	pending := map[string][]visibilityv1beta2.PendingWorkload{"borrower": {
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "first"}, LocalQueueName: "main", PositionInClusterQueue: 0},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "second"}, LocalQueueName: "main", PositionInClusterQueue: 1},
	}}
	v := buildView(t0, cqs, lqs, wls, pending)
	if len(v.Cohorts) != 2 || v.Cohorts[0].Name != "shared" || v.Cohorts[1].Name != "" {
		t.Fatalf("cohorts: %+v", v.Cohorts)
	}
	borrower, lender := v.Cohorts[0].Queues[0], v.Cohorts[0].Queues[1]
	if b := borrower.Resources[0]; b.Used != "6" || b.Borrowed != "2" || b.UsedPct != 4.0/6*100 || b.BorrowedPct != 2.0/6*100 {
		t.Errorf("borrower's bar: %+v", b)
	}
	if b := lender.Resources[0]; b.Lent != "2" || b.LentPct != 50 {
		t.Errorf("lender's bar: %+v", b)
	}
	if w := borrower.Waiting; len(w) != 2 || w[0].Name != "first" || w[1].Name != "second" || w[1].Position != 1 || w[1].Reason != "WaitingForQuota" || w[1].Message != "needs 1 cpu" {
		t.Errorf("waiting: %+v", w)
	}
	if r := v.Recent; len(r) != 2 || r[0].Name != "evicted" || r[0].What != "Evicted" || r[1].Name != "running" || r[1].What != "Admitted" {
		t.Errorf("recent: %+v", r)
	}

	page := template.Must(template.New("page").Parse(pageTemplate))
	var out bytes.Buffer
	if err := page.ExecuteTemplate(&out, "page", v); err != nil {
		t.Fatal(err)
	}
	html := out.String()
	for _, want := range []string{`id="cq-borrower"`, "6 / 4", "Cohort shared", "Not in a cohort", "WaitingForQuota</b> needs 1 cpu", "ns/evicted", "Preempted: to make room"} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// Without the visibility API, the pending workloads are still listed,
// without positions.
func TestBuildViewWithoutVisibility(t *testing.T) {
	cqs := []kueue.ClusterQueue{clusterQueue("q", "", "1", "1", "0")}
	lqs := []kueue.LocalQueue{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "main"}, Spec: kueue.LocalQueueSpec{ClusterQueue: "q"}}}
	v := buildView(t0, cqs, lqs, []kueue.Workload{workload("ns", "w", "main")}, nil)
	if w := v.Cohorts[0].Queues[0].Waiting; len(w) != 1 || w[0].Position != -1 {
		t.Errorf("waiting: %+v", w)
	}
}
