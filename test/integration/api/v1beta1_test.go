package api

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueuev1beta1 "github.com/sluicehq/sluice/apis/kueue/v1beta1"
	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// kueue.x-k8s.io/v1beta1 is served next to v1beta2 and converted by the
// manager: an object written in one version reads in the other in its
// terms, and v1beta1 writes meet the same rules (CEL and webhooks) as
// v1beta2 writes, so the older version is no way around validation.
func TestV1beta1IsServedAndConverted(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client
	cq := &kueuev1beta1.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: uniqueName("v1beta1-cq")}, Spec: kueuev1beta1.ClusterQueueSpec{
		Cohort: "shared", AdmissionChecks: []string{"check"}, NamespaceSelector: &metav1.LabelSelector{},
		FlavorFungibility: &kueuev1beta1.FlavorFungibility{WhenCanBorrow: kueuev1beta1.Borrow},
		ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
			Flavors: []kueue.FlavorQuotas{{Name: "f", Resources: []kueue.ResourceQuota{quota(corev1.ResourceCPU, "4")}}}}}}}
	if err := c.Create(ctx, cq); err != nil {
		t.Fatalf("creating a v1beta1 ClusterQueue: %v", err)
	}
	got := &kueue.ClusterQueue{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(cq), got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.CohortName != "shared" || got.Spec.AdmissionChecksStrategy == nil || got.Spec.AdmissionChecksStrategy.AdmissionChecks[0].Name != "check" ||
		got.Spec.FlavorFungibility.WhenCanBorrow != kueue.MayStopSearch {
		t.Errorf("read as v1beta2: %+v", got.Spec)
	}

	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: uniqueName("v1beta2-wl")}, Spec: kueue.WorkloadSpec{
		PodSets: []kueue.PodSet{podSet("main", 1, "1")}, Priority: ptr.To[int32](5),
		PriorityClassRef: &kueue.PriorityClassRef{Group: kueue.PodPriorityClassGroup, Kind: kueue.PodPriorityClassKind, Name: "batch"}}}
	if err := c.Create(ctx, wl); err != nil {
		t.Fatal(err)
	}
	old := &kueuev1beta1.Workload{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(wl), old); err != nil {
		t.Fatal(err)
	}
	if old.Spec.PriorityClassSource != kueuev1beta1.PodPriorityClassSource || old.Spec.PriorityClassName != "batch" {
		t.Errorf("read as v1beta1: %+v", old.Spec)
	}

	for _, tc := range []struct {
		name string
		obj  client.Object
		want []string
	}{
		{"CEL: borrowingLimit without a cohort", &kueuev1beta1.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: uniqueName("v1beta1-cq")}, Spec: kueuev1beta1.ClusterQueueSpec{
			ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
				Flavors: []kueue.FlavorQuotas{{Name: "f", Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse("1"),
					BorrowingLimit: ptr.To(resource.MustParse("1"))}}}}}}}},
			[]string{"spec.resourceGroups", "require a cohort"}},
		{"webhook: a negative quota", &kueuev1beta1.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: uniqueName("v1beta1-cq")}, Spec: kueuev1beta1.ClusterQueueSpec{
			ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
				Flavors: []kueue.FlavorQuotas{{Name: "f", Resources: []kueue.ResourceQuota{quota(corev1.ResourceCPU, "-1")}}}}}}},
			[]string{"nominalQuota"}},
		{"webhook: a workload asking for the reserved resource pods", &kueuev1beta1.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: uniqueName("v1beta1-wl")},
			Spec: kueuev1beta1.WorkloadSpec{PodSets: []kueue.PodSet{{Name: "main", Count: 1, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1")}}}}}}}}}},
			[]string{"pods"}},
	} {
		err := c.Create(ctx, tc.obj)
		if err == nil {
			t.Errorf("%s: accepted as v1beta1", tc.name)
			continue
		}
		for _, want := range tc.want {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v does not name %q", tc.name, err, want)
			}
		}
	}
}
