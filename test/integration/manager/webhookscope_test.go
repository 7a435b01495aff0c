package manager

import (
	"context"
	"fmt"
	"slices"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/config"
	"github.com/sluicehq/sluice/internal/manager"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// The integrations' webhooks fail closed, so the manager narrows them to
// its configuration: a disabled integration's webhooks are gone (and come
// back when it is enabled again), the others see only the managed
// namespaces, and each answers within 10 s or fails.
func TestWebhooksAreScopedToTheConfiguration(t *testing.T) {
	cluster, err := framework.StartCluster()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	ctx := context.Background()
	c := cluster.Client
	managed := &metav1.LabelSelector{MatchLabels: map[string]string{"team": "ml"}}
	start := func(frameworks ...string) func() error {
		cfg := cluster.ManagerConfig()
		cfg.Integrations.Frameworks = frameworks
		cfg.ManagedJobsNamespaceSelector = managed
		stop, err := cluster.StartManager(cfg, manager.Options{EnableWebhooks: true, SeveralPerProcess: true})
		if err != nil {
			t.Fatal(err)
		}
		return stop
	}
	names := func(ctx context.Context) ([]string, *admissionv1.MutatingWebhook, error) {
		live := &admissionv1.MutatingWebhookConfiguration{}
		if err := c.Get(ctx, client.ObjectKey{Name: config.MutatingWebhookConfigurationName}, live); err != nil {
			return nil, nil, err
		}
		var out []string
		var job *admissionv1.MutatingWebhook
		for i, w := range live.Webhooks {
			out = append(out, w.Name)
			if w.Name == "mjob.kueue.x-k8s.io" {
				job = &live.Webhooks[i]
			}
		}
		return out, job, nil
	}

	stop := start(configapi.FrameworkBatchJob)
	var job *admissionv1.MutatingWebhook
	framework.Eventually(t, "the pod, deployment and statefulset webhooks to be removed", func(ctx context.Context) (bool, error) {
		got, j, err := names(ctx)
		job = j
		return err == nil && !slices.Contains(got, "mpod.kueue.x-k8s.io") && !slices.Contains(got, "mdeployment.kueue.x-k8s.io") &&
			slices.Contains(got, "mworkload.kueue.x-k8s.io") && j != nil && j.NamespaceSelector.MatchLabels["team"] == "ml", err
	})
	if job.TimeoutSeconds == nil || *job.TimeoutSeconds != 10 {
		t.Errorf("mjob timeoutSeconds %v, want 10", job.TimeoutSeconds)
	}
	if !slices.ContainsFunc(job.NamespaceSelector.MatchExpressions, func(r metav1.LabelSelectorRequirement) bool {
		return r.Operator == metav1.LabelSelectorOpNotIn && slices.Contains(r.Values, "kube-system")
	}) {
		t.Errorf("mjob namespaceSelector %+v must keep kube-system out", job.NamespaceSelector)
	}

	ml := namespaceWith(t, c, map[string]string{"team": "ml"})
	other := namespaceWith(t, c, nil)
	for _, ns := range []string{ml, other} {
		if err := c.Create(ctx, &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lq"}, Spec: kueue.LocalQueueSpec{ClusterQueue: "cq"}}); err != nil {
			t.Fatal(err)
		}
	}
	// A labelled Job outside the managed namespaces is neither seen by the
	// webhook nor queued; inside, it is suspended.
	outside, inside := labelledJob(other), labelledJob(ml)
	for _, j := range []*batchv1.Job{outside, inside} {
		if err := c.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	if ptr.Deref(outside.Spec.Suspend, false) || !ptr.Deref(inside.Spec.Suspend, false) {
		t.Errorf("suspend outside=%v inside=%v, want false and true", outside.Spec.Suspend, inside.Spec.Suspend)
	}
	// Pods are not queued (pod integration off): no webhook sees them.
	p := labelledPod(ml)
	if err := c.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	if len(p.Spec.SchedulingGates) != 0 {
		t.Errorf("a Pod was gated with the pod integration off: %v", p.Spec.SchedulingGates)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	// Enabled again: the pod webhooks come back, reach the manager, and
	// gate a queued Pod.
	stop = start(configapi.FrameworkBatchJob, configapi.FrameworkPod)
	t.Cleanup(func() { _ = stop() })
	framework.Eventually(t, "the pod webhooks to be back", func(ctx context.Context) (bool, error) {
		got, _, err := names(ctx)
		return err == nil && slices.Contains(got, "mpod.kueue.x-k8s.io"), err
	})
	framework.Eventually(t, "a queued Pod to be gated", func(ctx context.Context) (bool, error) {
		p := labelledPod(ml)
		if err := c.Create(ctx, p); err != nil {
			return false, fmt.Errorf("creating a Pod: %w", err)
		}
		return slices.ContainsFunc(p.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == kueue.AdmissionSchedulingGate }), nil
	})
}

func namespaceWith(t *testing.T, c client.Client, labels map[string]string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "scope-", Labels: labels}}
	if err := c.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func labelledJob(ns string) *batchv1.Job {
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "job-", Labels: map[string]string{kueue.QueueNameLabel: "lq"}},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}}}
}

func labelledPod(ns string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "pod-", Labels: map[string]string{kueue.QueueNameLabel: "lq"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
}
