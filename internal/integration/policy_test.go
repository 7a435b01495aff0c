package integration

import (
	"context"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/apis/scheme"
)

var jobKind = Kind{Framework: "batch/job", GVK: batchv1.SchemeGroupVersion.WithKind("Job"), Children: []schema.GroupKind{{Kind: "Pod"}}}

// jobSetKind is a parent of Jobs.
var jobSetKind = Kind{Framework: "jobset.x-k8s.io/jobset", GVK: jobsetapi.SchemeGroupVersion.WithKind("JobSet"),
	Children: []schema.GroupKind{{Group: "batch", Kind: "Job"}}}

func TestDecide(t *testing.T) {
	objects := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{"kubernetes.io/metadata.name": "team-a"}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system", Labels: map[string]string{"kubernetes.io/metadata.name": "kube-system"}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "with-default", Labels: map[string]string{"kubernetes.io/metadata.name": "with-default"}}},
		&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "with-default", Name: "default"}},
		&jobsetapi.JobSet{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "p", UID: "p"}},
		&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "other-job", UID: "o"}},
	}
	reader := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objects...).Build()
	notSystem := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system", "sluice-system"}}}}
	job := func(ns string, labels map[string]string, owner *metav1.OwnerReference, annotations map[string]string) *batchv1.Job {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "j", Labels: labels, Annotations: annotations}}
		if owner != nil {
			j.OwnerReferences = []metav1.OwnerReference{*owner}
		}
		return j
	}
	queue := map[string]string{kueue.QueueNameLabel: "lq"}
	parentJob := &metav1.OwnerReference{APIVersion: "jobset.x-k8s.io/v1alpha2", Kind: "JobSet", Name: "p", UID: "p", Controller: ptr.To(true)}
	forgedUID := &metav1.OwnerReference{APIVersion: "jobset.x-k8s.io/v1alpha2", Kind: "JobSet", Name: "p", UID: "another", Controller: ptr.To(true)}
	missing := &metav1.OwnerReference{APIVersion: "jobset.x-k8s.io/v1alpha2", Kind: "JobSet", Name: "missing", UID: "m", Controller: ptr.To(true)}
	// A Job is an enabled kind but no parent of Jobs.
	anotherJob := &metav1.OwnerReference{APIVersion: "batch/v1", Kind: "Job", Name: "other-job", UID: "o", Controller: ptr.To(true)}
	cases := []struct {
		name         string
		withoutQueue bool
		obj          *batchv1.Job
		want         Placement
	}{
		{"queue-name label", false, job("team-a", queue, nil, nil), Placement{Managed: true, QueueName: "lq"}},
		{"queue-name label in a namespace not managed", false, job("kube-system", queue, nil, nil), Placement{}},
		{"no label, no default queue", false, job("team-a", nil, nil, nil), Placement{}},
		{"no label, default LocalQueue", false, job("with-default", nil, nil, nil), Placement{Managed: true, QueueName: "default", Defaulted: true}},
		{"manageJobsWithoutQueueName in a selected namespace", true, job("team-a", nil, nil, nil), Placement{Managed: true}},
		{"manageJobsWithoutQueueName never in kube-system", true, job("kube-system", nil, nil, nil), Placement{}},
		{"owned by an enabled kind", false, job("team-a", queue, parentJob, nil), Placement{}},
		{"claims an owner that doesn't exist", false, job("team-a", queue, missing, nil), Placement{Managed: true, QueueName: "lq"}},
		{"claims an owner of another UID", false, job("team-a", queue, forgedUID, nil), Placement{Managed: true, QueueName: "lq"}},
		{"controlled by an enabled kind that is not its parent", false, job("team-a", queue, anotherJob, nil), Placement{Managed: true, QueueName: "lq"}},
		{"owned by an enabled kind, standalone", false, job("team-a", queue, parentJob, map[string]string{kueue.StandaloneAnnotation: "true"}), Placement{Managed: true, QueueName: "lq"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPolicy(tc.withoutQueue, notSystem, []Kind{jobKind, jobSetKind}, reader)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Decide(context.Background(), reader, tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Decide = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestOwnedByKind(t *testing.T) {
	kinds := map[schema.GroupKind]bool{{Group: "batch", Kind: "Job"}: true}
	wl := &kueue.Workload{}
	if OwnedByKind(wl, kinds) {
		t.Error("a Workload without owner is owned by a kind")
	}
	wl.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "j", UID: "u", Controller: ptr.To(true)}}
	if !OwnedByKind(wl, kinds) {
		t.Error("a Job's Workload is not owned by the Job kind")
	}
	wl.OwnerReferences[0].Controller = nil
	if OwnedByKind(wl, kinds) {
		t.Error("a non-controller owner counts")
	}
}

func TestSamePodSets(t *testing.T) {
	base := func() []kueue.PodSet {
		return []kueue.PodSet{{Name: "main", Count: 2, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: mustQuantity("1")}}}},
		}}}}
	}
	cases := []struct {
		name   string
		modify func(ps *kueue.PodSet)
		same   bool
	}{
		{"identical", func(*kueue.PodSet) {}, true},
		{"defaulting-only differences", func(ps *kueue.PodSet) {
			ps.Template.Spec.Containers[0].TerminationMessagePath = "/dev/termination-log"
			ps.Template.Spec.DNSPolicy = corev1.DNSClusterFirst
		}, true},
		{"count", func(ps *kueue.PodSet) { ps.Count = 3 }, false},
		{"minCount", func(ps *kueue.PodSet) { ps.MinCount = ptr.To(int32(1)) }, false},
		{"requests", func(ps *kueue.PodSet) {
			ps.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = mustQuantity("500m")
		}, false},
		{"nodeSelector", func(ps *kueue.PodSet) { ps.Template.Spec.NodeSelector = map[string]string{"a": "b"} }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := base()
			tc.modify(&want[0])
			if got := samePodSets(base(), want); got != tc.same {
				t.Errorf("samePodSets = %v, want %v", got, tc.same)
			}
		})
	}
}

func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }

// A namespace created a moment ago may not be in the manager's cache yet:
// it is read from the API server rather than refused, for a Job (Decide)
// and for the Pod webhook (ManagesNamespace) alike.
func TestNamespaceMissingFromTheCacheIsReadFromTheAPI(t *testing.T) {
	cache := fake.NewClientBuilder().WithScheme(scheme.Scheme).Build()
	api := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "new", Labels: map[string]string{"team": "a"}}}).Build()
	p, err := NewPolicy(false, &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}, []Kind{jobKind}, api)
	if err != nil {
		t.Fatal(err)
	}
	managed, err := p.ManagesNamespace(context.Background(), cache, "new")
	if err != nil || !managed {
		t.Fatalf("ManagesNamespace = %v, %v; want true from the API server", managed, err)
	}
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "new", Name: "j", Labels: map[string]string{kueue.QueueNameLabel: "lq"}}}
	if d, err := p.Decide(context.Background(), cache, j); err != nil || !d.Managed {
		t.Fatalf("Decide = %+v, %v; want queued in lq", d, err)
	}
	if _, err := p.ManagesNamespace(context.Background(), cache, "gone"); err == nil {
		t.Error("a namespace that exists nowhere was not an error")
	}
}

func TestExternalKinds(t *testing.T) {
	kinds := ExternalKinds([]string{"AppWrapper.v1beta2.workload.codeflare.dev", "Widget.v1.example.com"})
	want := schema.GroupVersionKind{Group: "workload.codeflare.dev", Version: "v1beta2", Kind: "AppWrapper"}
	if len(kinds) != 2 || kinds[want.GroupKind()] != want {
		t.Fatalf("external kinds %v, want AppWrapper and Widget", kinds)
	}
}
