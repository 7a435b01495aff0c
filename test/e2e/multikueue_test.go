package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/apis/scheme"
	"github.com/sluicehq/sluice/internal/devcluster"
)

// multiKueueConfig loses a worker after 10s unreachable (Kueue's default
// is 15 minutes).
const multiKueueConfig = `apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
multiKueue:
  workerLostTimeout: 10s
`

// On `sluice dev --workers 2`: Jobs submitted to the manager cluster's
// sample queue run in the workers (real Job controllers, scheduler and
// simulated nodes) and complete, their status visible in the manager,
// within the manager's quota; a worker killed while it runs a Job (its
// etcd gone) loses it after workerLostTimeout, and the Job completes in
// the other worker.
func TestMultiKueueOnADevCluster(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte(multiKueueConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := startDev(dir, "--workers", "2", "--nodes", "1", "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.interrupt(); err != nil {
			t.Errorf("stopping sluice dev: %v", err)
		}
	})
	workers := map[string]client.Client{}
	for range 2 {
		line := <-d.lines
		name, kubeconfig, ok := strings.Cut(strings.TrimPrefix(line, devcluster.WorkerLinePrefix), " kubeconfig=")
		if !ok {
			t.Fatalf("worker line %q", line)
		}
		rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		if workers[name], err = client.New(rc, client.Options{Scheme: scheme.Scheme}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := d.client()
	if err != nil {
		t.Fatal(err)
	}

	// Three 2-pod Jobs of 1 CPU per pod. The manager's team-a queue has 8
	// CPUs on-demand: they all fit, and run in the workers.
	var jobs []*batchv1.Job
	for i := range 3 {
		j := queuedJob("team-a", fmt.Sprintf("mk-%d", i), 2, "3s")
		j.Labels[kueue.QueueNameLabel] = "user-queue"
		if err := c.Create(t.Context(), j); err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, j)
	}
	for _, j := range jobs {
		eventually(t, "Job "+j.Name+" to complete in the manager", func(ctx context.Context) (bool, error) {
			got := &batchv1.Job{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(j), got); err != nil {
				return false, err
			}
			return jobComplete(got) && got.Status.Succeeded == 2, nil
		})
	}
	wls := &kueue.WorkloadList{}
	if err := c.List(t.Context(), wls, client.InNamespace("team-a")); err != nil {
		t.Fatal(err)
	}
	for _, wl := range wls.Items {
		if wl.Status.ClusterName == nil || workers[*wl.Status.ClusterName] == nil {
			t.Fatalf("Workload %s ran in %v, not in a worker", wl.Name, wl.Status.ClusterName)
		}
	}

	// A Job runs in a worker; that worker's etcd dies.
	long := queuedJob("team-a", "mk-lost", 1, "25s")
	long.Labels[kueue.QueueNameLabel] = "user-queue"
	if err := c.Create(t.Context(), long); err != nil {
		t.Fatal(err)
	}
	var first string
	eventually(t, "the Job to run in a worker", func(ctx context.Context) (bool, error) {
		wl := workloadOf(ctx, c, long)
		if wl == nil || wl.Status.ClusterName == nil {
			return false, nil
		}
		first = *wl.Status.ClusterName
		got := &batchv1.Job{}
		return workers[first].Get(ctx, client.ObjectKeyFromObject(long), got) == nil && got.Status.Active > 0, nil
	})
	pid, err := d.childPID(filepath.Join(first, "etcd"))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Job to complete in the other worker", func(ctx context.Context) (bool, error) {
		wl := workloadOf(ctx, c, long)
		got := &batchv1.Job{}
		if wl == nil || c.Get(ctx, client.ObjectKeyFromObject(long), got) != nil {
			return false, nil
		}
		return jobComplete(got) && ptr.Deref(wl.Status.ClusterName, first) != first && meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished), nil
	})
}

func jobComplete(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobComplete && c.Status == "True" {
			return true
		}
	}
	return false
}

// workloadOf is the Workload a Job owns, or nil.
func workloadOf(ctx context.Context, c client.Client, j *batchv1.Job) *kueue.Workload {
	list := &kueue.WorkloadList{}
	if err := c.List(ctx, list, client.InNamespace(j.Namespace)); err != nil {
		return nil
	}
	for i := range list.Items {
		for _, o := range list.Items[i].OwnerReferences {
			if o.Name == j.Name && o.Kind == "Job" {
				return &list.Items[i]
			}
		}
	}
	return nil
}
