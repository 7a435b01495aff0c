package leaderworkerset

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/test/integration/framework"
)

var widgetGVK = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}

// widgetCRD serves Widget.v1.example.com, a kind another controller
// queues (integrations.externalFrameworks).
func widgetCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
		},
	}
}

// The Jobs and Pods an external framework's object owns are its own: its
// controller queues it, and they are not queued one by one.
func TestChildrenOfAnExternalFrameworkAreLeftToIt(t *testing.T) {
	ns := newQueue(t, "4")
	widget := &unstructured.Unstructured{}
	widget.SetGroupVersionKind(widgetGVK)
	widget.SetNamespace(ns)
	widget.SetName(cluster.Unique("widget"))
	cluster.MustCreate(t, widget)
	owner := *metav1.NewControllerRef(widget, widgetGVK)

	job := framework.Job(ns, cluster.Unique("job"), "lq", 1, "1")
	job.OwnerReferences = []metav1.OwnerReference{owner}
	cluster.MustCreate(t, job)
	if ptr.Deref(job.Spec.Suspend, false) {
		t.Fatal("the webhook suspended a Job an external framework owns")
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster.Unique("pod"),
		Labels: map[string]string{kueue.QueueNameLabel: "lq"}, OwnerReferences: []metav1.OwnerReference{owner}}, Spec: podTemplate().Spec}
	cluster.MustCreate(t, pod)
	if gated(pod) || pod.Labels[kueue.ManagedLabel] == "true" {
		t.Fatalf("a Pod an external framework owns was queued: gates %v labels %v", pod.Spec.SchedulingGates, pod.Labels)
	}

	// A forged reference (the Widget's name, another UID) exempts nothing.
	forged := framework.Job(ns, cluster.Unique("forged"), "lq", 1, "1")
	forgedOwner := owner
	forgedOwner.UID = "not-the-widgets-uid"
	forged.OwnerReferences = []metav1.OwnerReference{forgedOwner}
	cluster.MustCreate(t, forged)
	if !ptr.Deref(forged.Spec.Suspend, false) {
		t.Fatal("a Job claiming the Widget under another UID was not queued")
	}
	cluster.WaitWorkload(t, framework.JobWorkload(forged), "to exist", func(*kueue.Workload) error { return nil })
	list := &kueue.WorkloadList{}
	if err := cluster.Client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, wl := range list.Items {
		if o := metav1.GetControllerOf(&wl); o != nil && o.UID == job.UID {
			t.Fatalf("Workload %s was created for the Widget's Job", wl.Name)
		}
	}
}

// A Pod whose owner is a kind sluice knows but does not drive here (a
// StatefulSet, the statefulset integration disabled) belongs to its
// nearest enabled ancestor: the Widget above the StatefulSet counts it.
func TestPodOfADisabledKindUnderAnExternalFrameworkIsLeftToIt(t *testing.T) {
	ns := newQueue(t, "4")
	widget := &unstructured.Unstructured{}
	widget.SetGroupVersionKind(widgetGVK)
	widget.SetNamespace(ns)
	widget.SetName(cluster.Unique("widget"))
	cluster.MustCreate(t, widget)
	set := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster.Unique("sts"),
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(widget, widgetGVK)}},
		Spec: appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "w"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "w"}}, Spec: podTemplate().Spec}}}
	cluster.MustCreate(t, set)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster.Unique("pod"),
		Labels:          map[string]string{kueue.QueueNameLabel: "lq", "app": "w"},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(set, appsv1.SchemeGroupVersion.WithKind("StatefulSet"))}},
		Spec: podTemplate().Spec}
	cluster.MustCreate(t, pod)
	if gated(pod) || pod.Labels[kueue.ManagedLabel] == "true" {
		t.Fatalf("a Pod under a StatefulSet the Widget owns was queued: gates %v labels %v", pod.Spec.SchedulingGates, pod.Labels)
	}

	// The same Pod under a StatefulSet nobody owns is queued alone.
	orphanSet := set.DeepCopy()
	orphanSet.ObjectMeta = metav1.ObjectMeta{Namespace: ns, Name: cluster.Unique("sts")}
	cluster.MustCreate(t, orphanSet)
	alone := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster.Unique("pod"),
		Labels:          map[string]string{kueue.QueueNameLabel: "lq", "app": "w"},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(orphanSet, appsv1.SchemeGroupVersion.WithKind("StatefulSet"))}},
		Spec: podTemplate().Spec}
	cluster.MustCreate(t, alone)
	if !gated(alone) || alone.Labels[kueue.ManagedLabel] != "true" {
		t.Fatalf("a Pod with a queue under an unowned StatefulSet was not queued: gates %v labels %v", alone.Spec.SchedulingGates, alone.Labels)
	}
}
