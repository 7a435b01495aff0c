// Package migration reproduces the in-place switch from a Kueue that stored
// kueue.x-k8s.io/v1beta1 (0.15): Kueue's CRDs and v1beta1 objects in a real
// API server, sluice's CRDs applied over them, sluice's manager serving and
// admitting the existing objects (a workload Kueue admitted keeps its
// quota), and the storage migration that lets storedVersions drop v1beta1.
package migration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kueuev1beta1 "github.com/sluicehq/sluice/apis/kueue/v1beta1"
	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/apis/scheme"
	"github.com/sluicehq/sluice/config"
	"github.com/sluicehq/sluice/internal/manager"
	"github.com/sluicehq/sluice/internal/storagemigration"
	"github.com/sluicehq/sluice/test/integration/framework"
)

func TestSwitchInPlaceFromKueueV015(t *testing.T) {
	ctx := context.Background()
	cluster, err := framework.StartClusterFrom(kueueCRDs(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	c := withCRDs(t, cluster)

	// What Kueue 0.15 left: v1beta1 objects, one workload admitted.
	ns := "team"
	cpu := func(v string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(v)}
	}
	flavor := &kueuev1beta1.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	cq := &kueuev1beta1.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq"}, Spec: kueuev1beta1.ClusterQueueSpec{
		Cohort: "shared", NamespaceSelector: &metav1.LabelSelector{},
		ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
			Flavors: []kueue.FlavorQuotas{{Name: "default", Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse("4")}}}}}},
		FlavorFungibility: &kueuev1beta1.FlavorFungibility{WhenCanBorrow: kueuev1beta1.Borrow, WhenCanPreempt: kueuev1beta1.Preempt},
	}}
	lq := &kueuev1beta1.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lq"}, Spec: kueue.LocalQueueSpec{ClusterQueue: "cq"}}
	class := &kueuev1beta1.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 100}
	workload := func(name, cpus string) *kueuev1beta1.Workload {
		return &kueuev1beta1.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: kueuev1beta1.WorkloadSpec{
			QueueName: "lq", PriorityClassSource: kueuev1beta1.WorkloadPriorityClassSource, PriorityClassName: "high", Priority: ptr.To[int32](100),
			PodSets: []kueue.PodSet{{Name: "main", Count: 1, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{Requests: cpu(cpus)}}}}}}},
		}}
	}
	admitted, fits, waits := workload("admitted-by-kueue", "3"), workload("fits", "1"), workload("waits", "1")
	for _, obj := range []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, flavor, cq, lq, class, admitted} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatalf("creating %T %s as Kueue 0.15 would: %v", obj, obj.GetName(), err)
		}
	}
	now := metav1.Now()
	admitted.Status.Admission = &kueue.Admission{ClusterQueue: "cq", PodSetAssignments: []kueue.PodSetAssignment{{
		Name: "main", Count: ptr.To[int32](1), Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{corev1.ResourceCPU: "default"}, ResourceUsage: cpu("3")}}}
	admitted.Status.Conditions = []metav1.Condition{
		{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved", Message: "by Kueue", LastTransitionTime: now},
		{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, Reason: "Admitted", Message: "by Kueue", LastTransitionTime: now}}
	admitted.Status.AccumulatedPastExexcutionTimeSeconds = ptr.To[int32](42)
	if err := c.Status().Update(ctx, admitted); err != nil {
		t.Fatal(err)
	}

	// sluice's CRDs over Kueue's, converting through the manager's webhook.
	applySluiceCRDs(t, c, cluster)

	stop, err := cluster.StartManager(cluster.ManagerConfig(), manager.Options{EnableWebhooks: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stop() })

	// The v1beta1 objects read as v1beta2, in v1beta2's terms.
	framework.Eventually(t, "the ClusterQueue to be served as v1beta2 and active", func(ctx context.Context) (bool, error) {
		got := &kueue.ClusterQueue{}
		if err := c.Get(ctx, client.ObjectKey{Name: "cq"}, got); err != nil {
			return false, err
		}
		if got.Spec.CohortName != "shared" || got.Spec.FlavorFungibility.WhenCanBorrow != kueue.MayStopSearch {
			return false, fmt.Errorf("spec = %+v", got.Spec)
		}
		if !meta.IsStatusConditionTrue(got.Status.Conditions, kueue.ConditionActive) {
			return false, fmt.Errorf("conditions %v", got.Status.Conditions)
		}
		return true, nil
	})
	gotAdmitted := &kueue.Workload{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(admitted), gotAdmitted); err != nil {
		t.Fatal(err)
	}
	if ref := gotAdmitted.Spec.PriorityClassRef; ref == nil || ref.Name != "high" || ref.Kind != kueue.WorkloadPriorityClassKind ||
		ptr.Deref(gotAdmitted.Status.AccumulatedPastExecutionTimeSeconds, 0) != 42 {
		t.Errorf("the admitted workload as v1beta2: %+v, %v", gotAdmitted.Spec.PriorityClassRef, gotAdmitted.Status.AccumulatedPastExecutionTimeSeconds)
	}

	// New work, still written as v1beta1: one fits beside what Kueue
	// admitted, the next waits for it.
	for _, wl := range []*kueuev1beta1.Workload{fits, waits} {
		if err := c.Create(ctx, wl); err != nil {
			t.Fatalf("creating %s as v1beta1: %v", wl.Name, err)
		}
	}
	fitsV2 := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fits"}}
	cluster.WaitAdmitted(t, fitsV2)
	cluster.WaitPending(t, &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "waits"}}, kueue.ReasonWaitingForQuota)
	if err := framework.CheckQuotaInvariant(ctx, c); err != nil {
		t.Fatal(err)
	}
	// And a v1beta1 client reads back what sluice wrote.
	back := &kueuev1beta1.Workload{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(fits), back); err != nil {
		t.Fatal(err)
	}
	if back.Spec.PriorityClassSource != kueuev1beta1.WorkloadPriorityClassSource || back.Status.Admission == nil || back.Status.Admission.ClusterQueue != "cq" {
		t.Errorf("read as v1beta1: %+v / %+v", back.Spec, back.Status.Admission)
	}

	// The storage migration: every object rewritten, v1beta1 dropped from
	// storedVersions, nothing changed in what is served.
	results, err := storagemigration.Run(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	rewritten := map[string]int{}
	for _, r := range results {
		rewritten[r.CRD] = r.Rewritten
	}
	if rewritten["workloads.kueue.x-k8s.io"] != 3 || rewritten["clusterqueues.kueue.x-k8s.io"] != 1 || rewritten["localqueues.kueue.x-k8s.io"] != 1 {
		t.Errorf("rewritten = %v", rewritten)
	}
	crds := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := c.List(ctx, crds); err != nil {
		t.Fatal(err)
	}
	for _, crd := range crds.Items {
		if crd.Spec.Group == kueue.GroupVersion.Group && !slices.Equal(crd.Status.StoredVersions, []string{"v1beta2"}) {
			t.Errorf("%s stored versions = %v", crd.Name, crd.Status.StoredVersions)
		}
	}
	again := &kueue.Workload{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(admitted), again); err != nil || !framework.Reserved(again) {
		t.Errorf("the workload Kueue admitted after the migration: %v, %v", err, again.Status.Conditions)
	}
	if results, err := storagemigration.Run(ctx, c); err != nil || len(results) != 0 {
		t.Errorf("a second migration: %v, %v; want nothing to do", results, err)
	}
}

// kueueCRDs are Kueue 0.15.3's CustomResourceDefinitions.
func kueueCRDs(t *testing.T) []*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "kueue-v0.15.3", "crd", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("Kueue's CRDs: %v", err)
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, crd); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		crds = append(crds, crd)
	}
	return crds
}

// applySluiceCRDs updates each CRD to sluice's, with its conversion webhook
// at the manager's test server, as applying config/default would.
func applySluiceCRDs(t *testing.T, c client.Client, cluster *framework.Cluster) {
	t.Helper()
	crds, err := config.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	opts := cluster.Env.WebhookInstallOptions
	url := fmt.Sprintf("https://%s:%d/convert", opts.LocalServingHost, opts.LocalServingPort)
	for _, crd := range crds {
		crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter,
			Webhook: &apiextensionsv1.WebhookConversion{ConversionReviewVersions: []string{"v1"},
				ClientConfig: &apiextensionsv1.WebhookClientConfig{URL: &url, CABundle: opts.LocalServingCAData}}}
		live := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(context.Background(), client.ObjectKey{Name: crd.Name}, live); err != nil {
			t.Fatal(err)
		}
		live.Spec = crd.Spec
		if err := c.Update(context.Background(), live); err != nil {
			t.Fatalf("applying sluice's %s over Kueue's: %v", crd.Name, err)
		}
	}
	framework.Eventually(t, "sluice's CRDs to be established", func(ctx context.Context) (bool, error) {
		for _, crd := range crds {
			live := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(ctx, client.ObjectKey{Name: crd.Name}, live); err != nil {
				return false, err
			}
			for _, cond := range live.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status != apiextensionsv1.ConditionTrue {
					return false, fmt.Errorf("%s not established", crd.Name)
				}
			}
		}
		return true, nil
	})
}

// withCRDs is the cluster's client able to read CustomResourceDefinitions.
func withCRDs(t *testing.T, cluster *framework.Cluster) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := scheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cluster.RestConfig, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
