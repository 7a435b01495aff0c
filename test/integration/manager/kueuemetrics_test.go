package manager

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/manager"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// Kueue's gauges, scraped from the manager's endpoint while a queue fills
// and drains: three 1-CPU workloads on 2 CPU of quota make two reserving
// and one pending; one finishing lets the third in, and pending goes back
// to zero. The quota, reservation and the queue's status read as the
// ClusterQueue says; the admission counters and wait-time histograms
// count the three admissions, the finish is counted, and a preemption by a
// workload of higher priority counts one preemption and one eviction;
// stopping the queue evicts the rest and makes it pending.
func TestKueueGaugesFollowTheQueue(t *testing.T) {
	cluster, err := framework.StartCluster()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	cfg := cluster.ManagerConfig()
	cfg.Metrics.BindAddress = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cfg.Metrics.EnableClusterQueueResources = true
	stop, err := cluster.StartManager(cfg, manager.Options{EnableWebhooks: true, InsecureMetrics: true, SeveralPerProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stop() })
	url := "http://" + cfg.Metrics.BindAddress + "/metrics"

	ns := cluster.Namespace(t, nil)
	clusterQueue := framework.ClusterQueue("gauges-cq", "", framework.CPUQuota{Flavor: "default", Nominal: "2"})
	clusterQueue.Spec.Preemption = &kueue.ClusterQueuePreemption{WithinClusterQueue: kueue.PreemptionPolicyLowerPriority}
	cluster.MustCreate(t, framework.Flavor("default", nil), clusterQueue, framework.LocalQueue(ns, "gauges-lq", "gauges-cq"))
	wls := []*kueue.Workload{framework.Workload(ns, "a", "gauges-lq", 0, 1, "1"), framework.Workload(ns, "b", "gauges-lq", 0, 1, "1"), framework.Workload(ns, "c", "gauges-lq", 0, 1, "1")}
	for _, wl := range wls {
		cluster.MustCreate(t, wl)
	}
	// Queue names no other test of the package uses: the counters are the
	// process's, and namespaces are numbered afresh in every cluster.
	cq := map[string]string{"cluster_queue": "gauges-cq"}
	lq := map[string]string{"name": "gauges-lq", "namespace": ns}
	cpu := map[string]string{"cluster_queue": "gauges-cq", "flavor": "default", "resource": "cpu"}
	waitFor(t, url, "one pending and two reserving", []want{
		{"kueue_pending_workloads", cq, 1}, {"kueue_local_queue_pending_workloads", lq, 1},
		{"kueue_reserving_active_workloads", cq, 2}, {"kueue_admitted_active_workloads", cq, 2},
		{"kueue_local_queue_reserving_active_workloads", lq, 2},
		{"kueue_cluster_queue_nominal_quota", cpu, 2}, {"kueue_cluster_queue_resource_reservation", cpu, 2},
		{"kueue_cluster_queue_resource_usage", cpu, 2},
		{"kueue_cluster_queue_resource_pending", map[string]string{"cluster_queue": "gauges-cq", "resource": "cpu"}, 1},
		{"kueue_cluster_queue_status", map[string]string{"cluster_queue": "gauges-cq", "status": "active"}, 1},
		{"kueue_build_info", nil, 1},
	})

	var done *kueue.Workload
	for _, wl := range wls {
		if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(wl), wl); err != nil {
			t.Fatal(err)
		}
		if framework.Reserved(wl) {
			done = wl
			break
		}
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(done), done); err != nil {
			return err
		}
		meta.SetStatusCondition(&done.Status.Conditions, metav1.Condition{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: "Succeeded", Message: "done"})
		return cluster.Client.Status().Update(context.Background(), done)
	})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, url, "the pending one admitted once one finished", []want{
		{"kueue_pending_workloads", cq, 0}, {"kueue_local_queue_pending_workloads", lq, 0},
		{"kueue_cluster_queue_resource_pending", map[string]string{"cluster_queue": "gauges-cq", "resource": "cpu"}, 0},
		{"kueue_reserving_active_workloads", cq, 2}, {"kueue_cluster_queue_resource_reservation", cpu, 2},
		// Three admissions: as many as the wait-time histograms count.
		{"kueue_admitted_workloads_total", cq, 3}, {"kueue_quota_reserved_workloads_total", cq, 3},
		{"kueue_admission_wait_time_seconds", cq, 3}, {"kueue_quota_reserved_wait_time_seconds", cq, 3},
		{"kueue_local_queue_admitted_workloads_total", lq, 3}, {"kueue_local_queue_admission_wait_time_seconds", lq, 3},
	})
	waitFor(t, url, "the finished one counted", []want{
		{"kueue_finished_workloads_total", cq, 1}, {"kueue_local_queue_finished_workloads_total", lq, 1},
		{"kueue_finished_workloads", cq, 1}, {"kueue_local_queue_finished_workloads", lq, 1},
	})
	// Gone, it no longer counts in the gauges; the totals keep it.
	if err := cluster.Client.Delete(context.Background(), done); err != nil {
		t.Fatal(err)
	}
	waitFor(t, url, "the deleted finished one out of the gauges", []want{
		{"kueue_finished_workloads", cq, 0}, {"kueue_local_queue_finished_workloads", lq, 0},
		{"kueue_finished_workloads_total", cq, 1},
	})

	// A workload of higher priority preempts one of the two running.
	cluster.MustCreate(t, framework.Workload(ns, "urgent", "gauges-lq", 100, 1, "1"))
	waitFor(t, url, "one preemption, one eviction", []want{
		{"kueue_preempted_workloads_total", map[string]string{"preempting_cluster_queue": "gauges-cq", "reason": kueue.InClusterQueueReason}, 1},
		{"kueue_evicted_workloads_total", map[string]string{"cluster_queue": "gauges-cq", "reason": kueue.EvictedByPreemption, "underlying_cause": ""}, 1},
		{"kueue_local_queue_evicted_workloads_total", map[string]string{"name": "gauges-lq", "namespace": ns, "reason": kueue.EvictedByPreemption}, 1},
		{"kueue_pending_workloads", cq, 1},
	})

	// Stopped with HoldAndDrain: the two running are evicted by the
	// reconciler's own eviction path, and the queue is no longer active.
	framework.Update(t, cluster.Client, clusterQueue, func() {
		clusterQueue.Spec.StopPolicy = ptr.To(kueue.StopPolicyHoldAndDrain)
	})
	waitFor(t, url, "the stopped queue's workloads evicted", []want{
		{"kueue_evicted_workloads_total", map[string]string{"cluster_queue": "gauges-cq", "reason": kueue.EvictedByClusterQueueStopped}, 2},
		{"kueue_reserving_active_workloads", cq, 0},
		{"kueue_cluster_queue_status", map[string]string{"cluster_queue": "gauges-cq", "status": "pending"}, 1},
	})

	// Counters are the process's: other tests' managers count too.
	waitForAtLeast(t, url, "two admission cycles that admitted", want{"kueue_admission_attempts_total", map[string]string{"result": "success", "replica_role": "standalone"}, 2})
}

// want is a series' expected value: the sum over the series of name
// whose labels include labels.
type want struct {
	name   string
	labels map[string]string
	value  float64
}

func waitFor(t *testing.T, url, what string, wants []want) {
	t.Helper()
	framework.Eventually(t, what, func(ctx context.Context) (bool, error) {
		families, err := scrapeFamilies(ctx, url)
		if err != nil {
			return false, err
		}
		var wrong []string
		for _, w := range wants {
			got, found := sumOf(families[w.name], w.labels)
			if !found || got != w.value {
				wrong = append(wrong, fmt.Sprintf("%s%v = %v (found %v), want %v", w.name, w.labels, got, found, w.value))
			}
		}
		if len(wrong) > 0 {
			return false, fmt.Errorf("%s", strings.Join(wrong, "; "))
		}
		return true, nil
	})
}

// waitForAtLeast waits until w's sum is at least its value.
func waitForAtLeast(t *testing.T, url, what string, w want) {
	t.Helper()
	framework.Eventually(t, what, func(ctx context.Context) (bool, error) {
		families, err := scrapeFamilies(ctx, url)
		if err != nil {
			return false, err
		}
		got, found := sumOf(families[w.name], w.labels)
		return found && got >= w.value, nil
	})
}

func scrapeFamilies(ctx context.Context, url string) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(strings.NewReader(string(body)))
}

func sumOf(family *dto.MetricFamily, labels map[string]string) (float64, bool) {
	if family == nil {
		return 0, false
	}
	sum, found := 0.0, false
	for _, m := range family.Metric {
		matches := true
		for k, v := range labels {
			if !hasLabel(m, k, v) {
				matches = false
				break
			}
		}
		if !matches {
			continue
		}
		found = true
		switch {
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	return sum, found
}

// hasLabel tells whether m's label name has value; an empty value is an
// absent label in the exposition format.
func hasLabel(m *dto.Metric, name, value string) bool {
	for _, l := range m.Label {
		if l.GetName() == name {
			return l.GetValue() == value
		}
	}
	return value == ""
}
