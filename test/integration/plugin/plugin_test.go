// Package plugin runs kubectl-sluice's commands against a real API server
// with a sluice manager admitting: what they print and what they change.
package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/devcluster"
	"github.com/sluicehq/sluice/internal/manager"
	"github.com/sluicehq/sluice/internal/plugin"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// run executes kubectl-sluice with args against the cluster and returns
// what it printed.
func run(kubeconfig string, args ...string) (string, error) {
	var out, errOut bytes.Buffer
	cmd := plugin.NewCommand("kubectl-sluice", genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut})
	cmd.SetArgs(append(args, "--kubeconfig", kubeconfig))
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err := cmd.Execute()
	return out.String() + errOut.String(), err
}

// A ClusterQueue of 2 CPU that may not borrow, in a cohort with a lender
// whose 4 CPU are idle, takes three 1-CPU workloads: the plugin lists the
// queues' counts and the waiting workload with its reason, explains it
// (the numbers, who could lend, what holds the quota), prints JSON, and
// stops and resumes queues and workloads.
func TestPluginListsExplainsAndStops(t *testing.T) {
	cluster, err := framework.StartCluster()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	cfg := cluster.ManagerConfig()
	cluster.MustCreate(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: *cfg.Namespace}})
	if err := devcluster.RegisterLocalVisibility(t.Context(), cluster.Client, *cfg.Namespace, *cfg.VisibilityServer.BindPort); err != nil {
		t.Fatal(err)
	}
	stop, err := cluster.StartManager(cfg, manager.Options{EnableWebhooks: true, SeveralPerProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stop() })
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cluster.WriteAdminKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	ns := cluster.Namespace(t, nil)
	team := framework.ClusterQueue("team", "shared", framework.CPUQuota{Flavor: "default", Nominal: "2", Borrowing: ptr.To("0")})
	lender := framework.ClusterQueue("lender", "shared", framework.CPUQuota{Flavor: "default", Nominal: "4"})
	cluster.MustCreate(t, framework.Flavor("default", nil), team, lender, framework.LocalQueue(ns, "main", "team"))
	wls := []*kueue.Workload{framework.Workload(ns, "first", "main", 10, 1, "1"), framework.Workload(ns, "second", "main", 5, 1, "1")}
	for _, wl := range wls {
		cluster.MustCreate(t, wl)
	}
	cluster.WaitAdmitted(t, wls...)
	waiting := framework.Workload(ns, "third", "main", 0, 1, "1")
	cluster.MustCreate(t, waiting)
	cluster.WaitPending(t, waiting, "WaitingForQuota")

	framework.Eventually(t, "the ClusterQueue's counts in list clusterqueues", func(ctx context.Context) (bool, error) {
		out, err := run(kubeconfig, "list", "clusterqueues")
		if err != nil {
			return false, err
		}
		return containsRow(out, "team", "shared", "1", "2", "2", "True"), nil
	})
	// The waiting workload with its positions (LocalQueue, ClusterQueue:
	// from the visibility API) and priority, and why it waits.
	var out string
	framework.Eventually(t, "list workloads -o wide with the positions", func(context.Context) (bool, error) {
		var err error
		out, err = run(kubeconfig, "list", "workloads", "-n", ns, "-o", "wide")
		return containsRow(out, ns, "third", "main", "Pending", "0", "0", "0") && strings.Contains(out, "insufficient quota for cpu"), err
	})
	if !containsRow(out, "NAMESPACE", "NAME", "QUEUE", "CLUSTERQUEUE", "STATUS", "POSITION", "CQ", "POSITION", "PRIORITY") ||
		!containsRow(out, ns, "first", "main", "team", "Admitted", "10") {
		t.Errorf("list workloads:\n%s", out)
	}
	out, err = run(kubeconfig, "list", "localqueues", "-A", "--clusterqueue", "team")
	if err != nil || !containsRow(out, ns, "main", "team") {
		t.Errorf("list localqueues: %v\n%s", err, out)
	}

	out, err = run(kubeconfig, "why", "third", "-n", ns)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(out)
	for _, want := range []string{
		"Workload " + ns + "/third: Pending",
		"Why: ", "insufficient quota for cpu",
		"ClusterQueue team (cohort shared)",
		"Could lend in cohort shared:", "lender: 4 cpu of default unused",
		"Holding ClusterQueue team's quota (lowest priority first):",
		"Position: 0 in LocalQueue main, 0 in ClusterQueue team",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("why lacks %q:\n%s", want, out)
		}
	}
	if !containsRow(out, "default", "cpu", "2", "0", "2") {
		t.Errorf("why's quota table:\n%s", out)
	}
	if strings.Index(out, ns+"/second") > strings.Index(out, ns+"/first") {
		t.Errorf("why lists the holders by priority, lowest first:\n%s", out)
	}

	out, err = run(kubeconfig, "list", "workloads", "-n", ns, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var list kueue.WorkloadList
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Items) != 3 || list.Kind != "WorkloadList" {
		t.Errorf("-o json: %v, %d items, kind %q", err, len(list.Items), list.Kind)
	}
	if _, err := run(kubeconfig, "list", "workloads", "-o", "table"); err == nil || !strings.Contains(err.Error(), "--output") {
		t.Errorf("-o table: %v, want an error naming --output", err)
	}

	out, err = run(kubeconfig, "top", "--once")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "COHORT shared") || !containsRow(out, "team", "default", "cpu", "[####################]", "2/2", "0", "1", "2") ||
		!containsRow(out, "lender", "default", "cpu", "[....................]", "0/4") {
		t.Errorf("top --once:\n%s", out)
	}
	if out, err := run(kubeconfig, "completion", "bash"); err != nil || !strings.Contains(out, "kubectl-sluice") {
		t.Errorf("completion bash: %v\n%.200s", err, out)
	}

	ctx := context.Background()
	if _, err := run(kubeconfig, "stop", "clusterqueue", "team", "--drain"); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(team), team); err != nil || ptr.Deref(team.Spec.StopPolicy, "") != kueue.StopPolicyHoldAndDrain {
		t.Errorf("after stop --drain: %v, %v", team.Spec.StopPolicy, err)
	}
	if _, err := run(kubeconfig, "resume", "clusterqueue", "team"); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(team), team); err != nil || ptr.Deref(team.Spec.StopPolicy, "") != kueue.StopPolicyNone {
		t.Errorf("after resume: %v, %v", team.Spec.StopPolicy, err)
	}
	if _, err := run(kubeconfig, "stop", "workload", "third", "-n", ns); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, "the stopped workload inactive", func(ctx context.Context) (bool, error) {
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(waiting), waiting); err != nil {
			return false, err
		}
		return waiting.Spec.Active != nil && !*waiting.Spec.Active && !meta.IsStatusConditionTrue(waiting.Status.Conditions, kueue.WorkloadQuotaReserved), nil
	})
	if _, err := run(kubeconfig, "stop", "cohort", "x"); err == nil {
		t.Error("stop cohort: no error")
	}
	if _, err := run(kubeconfig, "why", "missing", "-n", ns); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("why of a missing workload: %v", err)
	}
}

// containsRow tells whether a line of out has the fields in order.
func containsRow(out string, fields ...string) bool {
	for line := range strings.SplitSeq(out, "\n") {
		got := strings.Fields(line)
		i := 0
		for _, f := range got {
			if i < len(fields) && f == fields[i] {
				i++
			}
		}
		if i == len(fields) {
			return true
		}
	}
	return false
}
