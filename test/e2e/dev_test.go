package e2e

import (
	"context"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// clusterTimeout bounds what a test waits for on the dev cluster.
const clusterTimeout = 2 * time.Minute

func sharedClient(t *testing.T) client.Client {
	t.Helper()
	c, err := shared.client()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func eventually(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, clusterTimeout, true, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func TestDevClusterServesTheSample(t *testing.T) {
	kubeconfig := shared.kubeconfig
	// The sample's two ClusterQueues (tests that ran before this one in
	// the shared cluster may have added their own).
	out := kubectl(t, kubeconfig, "get", "clusterqueues", "-o", "jsonpath={.items[*].metadata.name}")
	if names := strings.Fields(out); !slices.Contains(names, "team-a") || !slices.Contains(names, "team-b") {
		t.Errorf("sample ClusterQueues: got %q, want team-a and team-b among them", out)
	}
	for _, ns := range []string{"team-a", "team-b"} {
		if out := kubectl(t, kubeconfig, "get", "localqueues", "-n", ns, "-o", "jsonpath={.items[*].metadata.name}"); out != "user-queue" {
			t.Errorf("sample LocalQueue in %s: got %q", ns, out)
		}
	}
	// Four simulated nodes, Ready, two per flavor.
	out = kubectl(t, kubeconfig, "get", "nodes", "-o", `jsonpath={range .items[*]}{.metadata.labels.instance-type}={.status.conditions[?(@.type=="Ready")].status} {end}`)
	if strings.TrimSpace(out) != "on-demand=True on-demand=True spot=True spot=True" {
		t.Errorf("nodes: got %q, want two on-demand and two spot, all Ready", out)
	}
	// The manager holds its leader-election Lease.
	out = kubectl(t, kubeconfig, "get", "leases", "-n", "sluice-system", "-o", "jsonpath={.items[*].spec.holderIdentity}")
	if strings.TrimSpace(out) == "" {
		t.Errorf("no leader holds the manager's Lease")
	}
	// The webhooks answer: an invalid queue is rejected naming its field.
	bad := kubectlFails(t, kubeconfig, "create", "-f", "-", `apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: bad, namespace: default}
spec: {clusterQueue: "Not A Name"}
`)
	if !strings.Contains(bad, "spec.clusterQueue") {
		t.Errorf("the invalid LocalQueue was not rejected by field: %s", bad)
	}
}

// podTemplate runs for runFor on a simulated node.
func podTemplate(labels map[string]string, runFor string) corev1.PodTemplateSpec {
	annotations := map[string]string{}
	if runFor != "" {
		annotations["sluice.dev/run-for"] = runFor
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}}},
		},
	}
}

// A Job that no queue manages runs to completion on the simulated nodes:
// the controller-manager makes its pods, the scheduler binds them, kwok
// runs them for their sluice.dev/run-for.
func TestPlainJobRunsToCompletion(t *testing.T) {
	c := sharedClient(t)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "plain"},
		Spec: batchv1.JobSpec{Completions: ptr.To[int32](3), Parallelism: ptr.To[int32](2),
			Template: podTemplate(nil, "2s")},
	}
	if err := c.Create(t.Context(), job); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Job to complete", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
			return false, err
		}
		for _, cond := range job.Status.Conditions {
			if cond.Type == batchv1.JobFailed && cond.Status == corev1.ConditionTrue {
				t.Fatalf("the Job failed: %s", cond.Message)
			}
		}
		return job.Status.Succeeded == 3 && hasCondition(job.Status.Conditions, batchv1.JobComplete), nil
	})
}

func hasCondition(conds []batchv1.JobCondition, typ batchv1.JobConditionType) bool {
	for _, c := range conds {
		if c.Type == typ && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// A Pod with sluice.dev/exit-code fails with that code.
func TestPodFailsWithItsExitCode(t *testing.T) {
	c := sharedClient(t)
	tmpl := podTemplate(nil, "1s")
	tmpl.Annotations["sluice.dev/exit-code"] = "3"
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "failing", Annotations: tmpl.Annotations}, Spec: tmpl.Spec}
	if err := c.Create(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Pod to fail", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return false, err
		}
		return pod.Status.Phase == corev1.PodFailed, nil
	})
	if len(pod.Status.ContainerStatuses) != 1 || pod.Status.ContainerStatuses[0].State.Terminated == nil ||
		pod.Status.ContainerStatuses[0].State.Terminated.ExitCode != 3 {
		t.Errorf("container statuses = %+v, want one terminated with exit code 3", pod.Status.ContainerStatuses)
	}
}

// A Deployment gets its replicas Running; without sluice.dev/run-for they
// keep running.
func TestDeploymentReplicasRun(t *testing.T) {
	c := sharedClient(t)
	labels := map[string]string{"app": "web"}
	tmpl := podTemplate(labels, "")
	tmpl.Spec.RestartPolicy = corev1.RestartPolicyAlways
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl},
	}
	if err := c.Create(t.Context(), deploy); err != nil {
		t.Fatal(err)
	}
	eventually(t, "3 ready replicas", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(deploy), deploy); err != nil {
			return false, err
		}
		return deploy.Status.ReadyReplicas == 3, nil
	})
	pods := &corev1.PodList{}
	if err := c.List(t.Context(), pods, client.InNamespace("default"), client.MatchingLabels(labels)); err != nil {
		t.Fatal(err)
	}
	running := 0
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && strings.HasPrefix(p.Spec.NodeName, "sluice-node-") {
			running++
		}
	}
	if running != 3 {
		t.Errorf("%d pods Running on simulated nodes, want 3", running)
	}
}

// When a component dies, sluice dev says which and stops the whole
// cluster rather than running half of it.
func TestDevStopsWhenTheSchedulerDies(t *testing.T) {
	killAndExpectStop(t, "kube-scheduler", "kube-scheduler exited")
}

// The API server is envtest's child, watched through /livez: its death
// stops the cluster too, named.
func TestDevStopsWhenTheAPIServerDies(t *testing.T) {
	killAndExpectStop(t, "kube-apiserver", "kube-apiserver stopped answering")
}

// killAndExpectStop starts a small sluice dev, SIGKILLs its child running
// component, and expects sluice dev to fail within a minute with
// wantMessage on stderr, leaving kube-controller-manager stopped too.
func killAndExpectStop(t *testing.T, component, wantMessage string) {
	t.Helper()
	d, err := startDev(t.TempDir(), "--no-sample", "--nodes", "1")
	if err != nil {
		t.Fatal(err)
	}
	pid, err := d.childPID(component)
	if err != nil {
		_ = d.interrupt()
		t.Fatal(err)
	}
	kcm, err := d.childPID("kube-controller-manager")
	if err != nil {
		_ = d.interrupt()
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-d.exited:
		if err == nil {
			t.Fatalf("sluice dev exited with success after %s died", component)
		}
	case <-time.After(time.Minute):
		_ = d.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case err := <-d.exited:
			t.Logf("sluice dev exited on SIGQUIT: %v", err)
		case <-time.After(10 * time.Second):
			_ = d.cmd.Process.Kill()
		}
		t.Fatalf("sluice dev kept running for a minute after %s died:\n%s", component, d.stderr.String())
	}
	if stderr := d.stderr.String(); !strings.Contains(stderr, wantMessage) {
		t.Errorf("the error does not name %s (want %q):\n%s", component, wantMessage, tail(stderr, 20))
	}
	if err := syscall.Kill(kcm, 0); err == nil {
		t.Error("kube-controller-manager still runs after sluice dev exited")
	}
}
