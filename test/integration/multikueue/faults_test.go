package multikueue

import (
	"context"
	"fmt"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// unreachable is a kubeconfig of a server nobody listens on.
const unreachable = `apiVersion: v1
kind: Config
clusters:
- name: gone
  cluster:
    server: https://127.0.0.1:1
    insecure-skip-tls-verify: true
users:
- name: u
  user:
    token: t
contexts:
- name: c
  context: {cluster: gone, user: u}
current-context: c
`

func putKubeconfig(t *testing.T, secret string, data []byte) {
	t.Helper()
	if err := cluster.PutSecret(context.Background(), *cluster.ManagerConfig().Namespace, secret, "kubeconfig", data); err != nil {
		t.Fatal(err)
	}
}

// A worker that can't be reached turns inactive; past workerLostTimeout
// its Job queues again in the manager and is dispatched to the other
// worker. When the lost worker comes back, its stale copy is deleted: the
// Job never runs twice.
func TestLostWorkerHandsItsJobToAnother(t *testing.T) {
	s := newSetup(t, "4", "4", workerNames...)
	j := framework.Job(s.ns, "job", "lq", 1, "1")
	cluster.MustCreate(t, j)
	wl := framework.JobWorkload(j)
	first := dispatchedTo(t, wl, s.check)
	remoteJob(t, first, j)
	runPods(t, first, j, 1)

	putKubeconfig(t, first, []byte(unreachable))
	t.Cleanup(func() {
		putKubeconfig(t, first, kubeconfigs[first])
		waitClusterActive(t, first, metav1.ConditionTrue, "Active")
	})
	waitClusterActive(t, first, metav1.ConditionFalse, "ClientConnectionFailed")
	got := cluster.WaitWorkload(t, wl, "dispatched to the other worker", func(wl *kueue.Workload) error {
		if wl.Status.ClusterName == nil || *wl.Status.ClusterName != other(first) || framework.CheckStates(wl)[s.check] != kueue.CheckStateReady {
			return fmt.Errorf("clusterName %q, checks %v, conditions %v", ptr.Deref(wl.Status.ClusterName, ""), framework.CheckStates(wl), wl.Status.Conditions)
		}
		return nil
	})
	if c := got.Status.AdmissionChecks[0]; ptr.Deref(c.RetryCount, 0) < 1 {
		t.Fatalf("retryCount = %v: the move was not a retry", c.RetryCount)
	}
	remoteJob(t, other(first), j)

	putKubeconfig(t, first, kubeconfigs[first])
	waitClusterActive(t, first, metav1.ConditionTrue, "Active")
	goneFrom(t, first, &batchv1.Job{ObjectMeta: j.ObjectMeta})
	goneFrom(t, first, &kueue.Workload{ObjectMeta: wl.ObjectMeta})
}

// A kubeconfig that would make the manager run a command is refused
// unless the MultiKueueAllowInsecureKubeconfigs gate allows it, and the
// condition does not quote the credentials.
func TestKubeconfigRunningACommandIsRefused(t *testing.T) {
	name := cluster.Unique("exec")
	putKubeconfig(t, name, []byte(strings.Replace(unreachable, "    token: t\n", "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/steal-secrets\n", 1)))
	cluster.MustCreate(t, &kueue.MultiKueueCluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kueue.MultiKueueClusterSpec{
		ClusterSource: kueue.ClusterSource{KubeConfig: &kueue.KubeConfig{Location: name}}}})
	c := waitClusterActive(t, name, metav1.ConditionFalse, "InsecureKubeConfig")
	if !strings.Contains(c.Message, "exec") || strings.Contains(c.Message, "steal-secrets") {
		t.Fatalf("message %q: want the rule, not the kubeconfig's content", c.Message)
	}
}

// A worker without a LocalQueue the manager's dispatching queues send work
// to is inactive, naming it; once it has it, it is active again.
func TestWorkerWithoutTheLocalQueueIsInactive(t *testing.T) {
	s := newSetup(t, "4", "4", workerNames[0])
	// A second queue of the same ClusterQueue, not in the worker.
	cluster.MustCreate(t, framework.LocalQueue(s.ns, "other", s.cq.Name))
	c := waitClusterActive(t, workerNames[0], metav1.ConditionFalse, "MissingLocalQueues")
	if !strings.Contains(c.Message, s.ns+"/other") {
		t.Fatalf("message %q does not name the missing LocalQueue", c.Message)
	}
	w := workers[workerNames[0]]
	lq := &kueue.LocalQueue{}
	if err := w.Client.Get(context.Background(), client.ObjectKey{Namespace: s.ns, Name: "lq"}, lq); err != nil {
		t.Fatal(err)
	}
	w.MustCreate(t, framework.LocalQueue(s.ns, "other", string(lq.Spec.ClusterQueue)))
	waitClusterActive(t, workerNames[0], metav1.ConditionTrue, "Active")
}
