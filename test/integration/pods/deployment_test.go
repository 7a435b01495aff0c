package pods

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/test/integration/framework"
)

func TestDeploymentPassesItsQueueToItsPods(t *testing.T) {
	ns, _ := newQueue(t, "3")
	labels := map[string]string{"app": "web"}
	tmpl := newPodTemplate()
	tmpl.Labels = labels
	tmpl.Spec.RestartPolicy = corev1.RestartPolicyAlways
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster.Unique("web"), Labels: map[string]string{kueue.QueueNameLabel: "lq"}},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(2)), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl}}
	cluster.MustCreate(t, d)
	if d.Spec.Template.Labels[kueue.QueueNameLabel] != "lq" || d.Spec.Template.Annotations[kueue.PodSuspendingParentAnno] != "deployment" {
		t.Fatalf("pod template labels %v, annotations %v: want the queue-name and pod-suspending-parent", d.Spec.Template.Labels, d.Spec.Template.Annotations)
	}

	// With Pods (status.replicas > 0) the queue is fixed.
	d.Status.Replicas = 2
	if err := cluster.Client.Status().Update(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	err := cluster.TryUpdate(d, func() { d.Labels[kueue.QueueNameLabel] = "other" })
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), kueue.QueueNameLabel) {
		t.Fatalf("changing the queue of a Deployment with Pods: %v, want Invalid naming the label", err)
	}
	framework.Update(t, cluster.Client, d, func() { d.Spec.Replicas = ptr.To(int32(0)) })
	current := &appsv1.Deployment{}
	if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(d), current); err != nil {
		t.Fatal(err)
	}
	current.Status.Replicas = 0
	if err := cluster.Client.Status().Update(context.Background(), current); err != nil {
		t.Fatal(err)
	}
	if err := cluster.TryUpdate(d, func() { d.Labels[kueue.QueueNameLabel] = "other" }); err != nil {
		t.Errorf("changing the queue of a Deployment scaled to 0: %v", err)
	}
}

func TestStatefulSetMakesItsPodsOneGroup(t *testing.T) {
	ns, _ := newQueue(t, "3")
	s := newStatefulSet(t, ns, 3)
	got := s.Spec.Template
	want := map[string]string{
		kueue.PodGroupTotalCountAnno: "3", kueue.PodGroupServingAnno: "true",
		kueue.PodGroupFastAdmissionAnno: "true", kueue.PodSuspendingParentAnno: "statefulset",
	}
	for k, v := range want {
		if got.Annotations[k] != v {
			t.Errorf("template annotation %s = %q, want %q", k, got.Annotations[k], v)
		}
	}
	if got.Labels[kueue.PodGroupNameLabel] != "statefulset-db" || got.Labels[kueue.QueueNameLabel] != "lq" {
		t.Errorf("template labels %v, want group statefulset-db in lq", got.Labels)
	}
}
