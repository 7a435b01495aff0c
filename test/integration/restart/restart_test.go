// Package restart tests that admission survives the loss of its manager:
// real `sluice manager` processes elect a leader through a Lease; the first
// one is killed mid-burst, and the next one must rebuild its state from the
// Workloads before it admits anything.
package restart

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// A short lease, so that the next leader takes over quickly after a kill.
const managerConfig = `apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
leaderElection:
  leaseDuration: 4s
  renewDeadline: 3s
  retryPeriod: 500ms
`

// Acceptance 8: stop the manager while workloads are being admitted, start
// a new one: the invariant holds and every workload that fits is admitted
// exactly once.
func TestRestartMidBurst(t *testing.T) {
	cluster, err := framework.StartClusterWithoutWebhooks()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	dir := t.TempDir()
	sluice, err := framework.BuildSluice(dir)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, config := filepath.Join(dir, "kubeconfig"), filepath.Join(dir, "config.yaml")
	if err := cluster.WriteAdminKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(config, []byte(managerConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	c := cluster.Client
	ctx := context.Background()

	const capacityPerQueue, workloads = 15, 200
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "sluice-system"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}},
		&kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "default"}},
	}
	for i := range 2 {
		name := fmt.Sprintf("cq-%d", i)
		objs = append(objs, &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kueue.ClusterQueueSpec{
			CohortName: "shared", NamespaceSelector: &metav1.LabelSelector{},
			ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
				Flavors: []kueue.FlavorQuotas{{Name: "default", Resources: []kueue.ResourceQuota{
					{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse(fmt.Sprint(capacityPerQueue))}}}}}},
		}}, &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name}, Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(name)}})
	}
	for _, obj := range objs {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}

	first := startManager(t, sluice, kubeconfig, config, filepath.Join(dir, "first.log"))
	var created sync.WaitGroup
	next := make(chan int)
	for range 8 {
		created.Go(func() {
			for i := range next {
				if err := c.Create(ctx, workload(i)); err != nil {
					t.Errorf("creating workload %d: %v", i, err)
				}
			}
		})
	}
	for i := range workloads {
		if i == workloads/3 {
			// Mid-burst: once the first manager has admitted some, kill it
			// (no chance to clean up) and start another while creations go on.
			framework.Eventually(t, "the first manager to admit", func(ctx context.Context) (bool, error) {
				return countReserved(ctx, c) > 0, nil
			})
			if err := first.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = first.Wait()
			startManager(t, sluice, kubeconfig, config, filepath.Join(dir, "second.log"))
		}
		next <- i
		if i%20 == 0 {
			if err := framework.CheckQuotaInvariant(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
	}
	close(next)
	created.Wait()

	want := 2 * capacityPerQueue
	framework.Eventually(t, fmt.Sprintf("%d workloads admitted, the rest waiting for quota", want), func(ctx context.Context) (bool, error) {
		if err := framework.CheckQuotaInvariant(ctx, c); err != nil {
			return false, err
		}
		list := &kueue.WorkloadList{}
		if err := c.List(ctx, list); err != nil {
			return false, err
		}
		// Every workload not admitted waits; the head of each of the two
		// ClusterQueues says why (the ones behind it wait behind it, and
		// say so only if they had been told something else before, such
		// as their queue not being evaluated yet at a start).
		reserved, waiting := 0, map[kueue.LocalQueueName]int{}
		for _, wl := range list.Items {
			switch cond := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved); {
			case cond == nil:
			case cond.Status == metav1.ConditionTrue:
				reserved++
			case cond.Reason == kueue.ReasonWaitingForQuota:
				waiting[wl.Spec.QueueName]++
			default:
				return false, fmt.Errorf("%s waits with %s: %s", wl.Name, cond.Reason, cond.Message)
			}
			if meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted) != nil {
				return false, fmt.Errorf("%s was evicted: admissions must happen exactly once", wl.Name)
			}
		}
		if reserved > want {
			t.Fatalf("%d workloads hold quota for %d", reserved, want)
		}
		if reserved != want || len(list.Items) != workloads || len(waiting) != 2 {
			return false, fmt.Errorf("%d of %d reserved, waiting for quota by queue: %v", reserved, len(list.Items), waiting)
		}
		return true, nil
	})
}

func workload(i int) *kueue.Workload {
	return &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: fmt.Sprintf("w-%03d", i)}, Spec: kueue.WorkloadSpec{
		QueueName: kueue.LocalQueueName(fmt.Sprintf("cq-%d", i%2)), Priority: ptr.To[int32](0),
		PodSets: []kueue.PodSet{{Name: "main", Count: 1, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}}},
	}}
}

func countReserved(ctx context.Context, c client.Client) int {
	list := &kueue.WorkloadList{}
	if err := c.List(ctx, list); err != nil {
		return 0
	}
	n := 0
	for _, wl := range list.Items {
		if meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved) {
			n++
		}
	}
	return n
}

func startManager(t *testing.T, sluice, kubeconfig, config, logPath string) *exec.Cmd {
	t.Helper()
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sluice, "manager", "--kubeconfig", kubeconfig, "--config", config, "--webhooks=false",
		"--metrics-bind-address=0", "--health-probe-bind-address=0")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
		}
		logFile.Close()
		if t.Failed() {
			out, _ := os.ReadFile(logPath)
			t.Logf("%s:\n%s", filepath.Base(logPath), tailLines(string(out), 30))
		}
	})
	return cmd
}

func tailLines(s string, n int) string {
	lines := 0
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '\n' {
			lines++
			if lines > n {
				return s[i+1:]
			}
		}
	}
	return s
}
