package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// kueuectl runs Kueue's own kubectl plugin, built from Kueue's Go module
// by `make test` (hack/kueuebench; never linked into sluice).
func kueuectl(ctx context.Context, t *testing.T, args ...string) (string, error) {
	t.Helper()
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "bin", "kueuebench", "kubectl-kueue")
	out, err := exec.CommandContext(ctx, bin, append(args, "--kubeconfig", shared.kubeconfig)...).CombinedOutput()
	return string(out), err
}

// pendingAt tells whether out (kubectl kueue list workload) has the
// Workload of Job job pending at position in its LocalQueue.
func pendingAt(out, job, position string) bool {
	for line := range strings.SplitSeq(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], "job-"+job+"-") {
			continue
		}
		i := slices.Index(f, "PENDING")
		return i >= 0 && i+1 < len(f) && f[i+1] == position
	}
	return false
}

// Kueue's kubectl plugin, unchanged, against sluice: its list commands
// show sluice's queues, and the waiting workloads with their positions,
// which it reads from the visibility API that sluice serves.
func TestKueuesKubectlPluginListsSluicesQueues(t *testing.T) {
	c := sharedClient(t)
	const ns = "e2e-kueuectl"
	e2eQueue(t, c, ns, "on-demand", "1")
	t.Cleanup(func() {
		_ = c.DeleteAllOf(context.Background(), &batchv1.Job{}, client.InNamespace(ns), client.PropagationPolicy(metav1.DeletePropagationBackground))
	})
	var last string
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last seen: %s", last)
		}
	})
	// One at a time, each Workload made before the next Job: a Workload's
	// place is its creation (to the second; the name breaks a tie, hence
	// names in the order of creation), which sluice does asynchronously.
	for _, name := range []string{"holder", "queued-1", "queued-2"} {
		runFor := ""
		if name == "holder" {
			runFor = "10m"
		}
		if err := c.Create(t.Context(), queuedJob(ns, name, 1, runFor)); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the Workload of "+name, func(ctx context.Context) (bool, error) {
			list := &kueue.WorkloadList{}
			if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
				return false, err
			}
			for _, wl := range list.Items {
				if strings.HasPrefix(wl.Name, "job-"+name+"-") {
					return name != "holder" || wl.Status.Admission != nil, nil
				}
			}
			return false, nil
		})
	}

	var out string
	eventually(t, "kubectl kueue list workload with the positions", func(ctx context.Context) (bool, error) {
		var err error
		out, err = kueuectl(ctx, t, "list", "workload", "-n", ns)
		if ctx.Err() == nil {
			last = fmt.Sprintf("%v\n%s", err, out)
		}
		return pendingAt(out, "queued-1", "0") && pendingAt(out, "queued-2", "1"), nil
	})
	t.Logf("kubectl kueue list workload:\n%s", out)
	out, err := kueuectl(t.Context(), t, "list", "clusterqueue")
	if err != nil || !strings.Contains(out, ns) {
		t.Errorf("kubectl kueue list clusterqueue: %v\n%s", err, out)
	}
	out, err = kueuectl(t.Context(), t, "list", "localqueue", "-n", ns)
	if err != nil || !strings.Contains(out, "lq") || !strings.Contains(out, ns) {
		t.Errorf("kubectl kueue list localqueue: %v\n%s", err, out)
	}
}
