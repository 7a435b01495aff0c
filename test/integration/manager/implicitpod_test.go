package manager

import (
	"context"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/manager"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// A Deployment is queued through its Pods: with "deployment" enabled and
// "pod" left out of integrations.frameworks, the pod integration is still
// on for the Deployment's Pods (Kueue's implicitly enabled pod
// integration), else they would run unqueued; a plain Pod is let through.
func TestKindsQueuedThroughPodsEnableThePodIntegration(t *testing.T) {
	cluster, err := framework.StartCluster()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	cfg := cluster.ManagerConfig()
	cfg.Integrations.Frameworks = []string{configapi.FrameworkBatchJob, configapi.FrameworkDeployment}
	stop, err := cluster.StartManager(cfg, manager.Options{EnableWebhooks: true, SeveralPerProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stop() })
	ctx := context.Background()
	c := cluster.Client
	ns := namespaceWith(t, c, nil)
	if err := c.Create(ctx, &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lq"}, Spec: kueue.LocalQueueSpec{ClusterQueue: "cq"}}); err != nil {
		t.Fatal(err)
	}
	pod := labelledPod(ns)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", Labels: map[string]string{kueue.QueueNameLabel: "lq"}},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}, Spec: pod.Spec}},
	}
	framework.Eventually(t, "the Deployment's template to be sent to the pod integration", func(ctx context.Context) (bool, error) {
		d.ResourceVersion = ""
		if err := c.Create(ctx, d, &client.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			return false, nil
		}
		return d.Spec.Template.Annotations[kueue.PodSuspendingParentAnno] == configapi.FrameworkDeployment, nil
	})
	// A Pod as the Deployment's ReplicaSet would make it (no controller
	// runs here) is gated; a plain labelled Pod is not.
	deploymentPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "web-",
		Labels: d.Spec.Template.Labels, Annotations: d.Spec.Template.Annotations}, Spec: d.Spec.Template.Spec}
	framework.Eventually(t, "the Deployment's Pod to be gated", func(ctx context.Context) (bool, error) {
		p := deploymentPod.DeepCopy()
		if err := c.Create(ctx, p, &client.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			return false, nil
		}
		return slices.ContainsFunc(p.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == kueue.AdmissionSchedulingGate }), nil
	})
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	if len(pod.Spec.SchedulingGates) != 0 || pod.Labels[kueue.ManagedLabel] == "true" {
		t.Errorf("a plain Pod was queued with only the Deployment integration on: gates %v, labels %v", pod.Spec.SchedulingGates, pod.Labels)
	}
}
