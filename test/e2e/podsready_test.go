package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// podsReadyConfig is a manager configuration with a short
// waitForPodsReady timeout, admitting one Job at a time.
const podsReadyConfig = `apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
waitForPodsReady:
  timeout: 8s
  blockAdmission: true
  requeuingStrategy: {backoffBaseSeconds: 60, backoffLimitCount: 3}
`

// On a local cluster run with `sluice dev --config`: with blockAdmission a
// second Job waits while the first one's pods are not ready; a Job whose
// pods can't be scheduled (a node selector no node has) is evicted after
// the timeout, and the Job behind it runs.
func TestWaitForPodsReadyOnADevCluster(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte(podsReadyConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := startDev(dir, "--no-sample", "--nodes", "1", "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.interrupt(); err != nil {
			t.Errorf("stopping sluice dev: %v", err)
		}
	})
	c, err := d.client()
	if err != nil {
		t.Fatal(err)
	}
	flavor := &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "any"}}
	if err := c.Create(t.Context(), flavor); err != nil {
		t.Fatal(err)
	}
	e2eQueue(t, c, "ready", "any", "4")

	stuck := queuedJob("ready", "unschedulable", 1, "")
	stuck.Spec.Template.Spec.NodeSelector = map[string]string{"example.com/no-such-node": "true"}
	behind := queuedJob("ready", "behind", 1, "")
	wlOf := func(j *batchv1.Job) *kueue.Workload {
		list := &kueue.WorkloadList{}
		if err := c.List(t.Context(), list, client.InNamespace("ready")); err != nil {
			t.Fatal(err)
		}
		for i := range list.Items {
			if owner := metav1.GetControllerOf(&list.Items[i]); owner != nil && owner.UID == j.UID {
				return &list.Items[i]
			}
		}
		return nil
	}
	condition := func(wl *kueue.Workload, typ string) *metav1.Condition {
		if wl == nil {
			return nil
		}
		return meta.FindStatusCondition(wl.Status.Conditions, typ)
	}
	// The unschedulable Job is admitted first; the one behind waits for
	// its pods, saying so.
	if err := c.Create(t.Context(), stuck); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the unschedulable Job to start", func(ctx context.Context) (bool, error) { return running(t, c, stuck), nil })
	if err := c.Create(t.Context(), behind); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the second Job to wait for the first one's pods", func(ctx context.Context) (bool, error) {
		c := condition(wlOf(behind), kueue.WorkloadQuotaReserved)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == "WaitingForPodsReady", nil
	})
	if !running(t, c, stuck) {
		t.Fatal("the first Job is not running while the second waits for its pods")
	}
	// After the timeout, the first is evicted and the second runs, its pod
	// ready on the simulated node.
	eventually(t, "the unschedulable Job to be evicted for PodsReadyTimeout", func(ctx context.Context) (bool, error) {
		c := condition(wlOf(stuck), kueue.WorkloadEvicted)
		return c != nil && c.Status == metav1.ConditionTrue && c.Reason == kueue.EvictedByPodsReadyTimeout, nil
	})
	eventually(t, "the Job behind it to run with its pods ready", func(ctx context.Context) (bool, error) {
		c := condition(wlOf(behind), kueue.WorkloadPodsReady)
		return c != nil && c.Status == metav1.ConditionTrue, nil
	})
	eventually(t, "the evicted Job to be suspended and backing off", func(ctx context.Context) (bool, error) {
		wl := wlOf(stuck)
		return !running(t, c, stuck) && wl != nil && wl.Status.RequeueState != nil && wl.Status.RequeueState.RequeueAt != nil, nil
	})
	if wl := wlOf(stuck); ptr.Deref(wl.Status.RequeueState.Count, 0) != 1 {
		t.Fatalf("requeueState = %+v, want count 1", wl.Status.RequeueState)
	}
	// A Job whose pods become ready does not hold the next one back.
	third := queuedJob("ready", "third", 1, "")
	third.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	if err := c.Create(t.Context(), third); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a third Job to run once the second one's pods are ready", func(ctx context.Context) (bool, error) {
		return running(t, c, third), nil
	})
}

// running tells whether a Job is unsuspended.
func running(t *testing.T, c client.Client, j *batchv1.Job) bool {
	t.Helper()
	current := &batchv1.Job{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(j), current); err != nil {
		t.Fatal(fmt.Errorf("reading Job %s: %w", j.Name, err))
	}
	return !ptr.Deref(current.Spec.Suspend, true)
}
