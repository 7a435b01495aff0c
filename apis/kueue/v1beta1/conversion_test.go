package v1beta1

import (
	"testing"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	"sigs.k8s.io/randfill"

	"github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// Every v1beta2 object survives a trip through v1beta1 unchanged: the
// storage version loses nothing when a client reads and writes v1beta1.
func TestHubRoundTrip(t *testing.T) {
	pairs := []struct {
		hub   func() conversion.Hub
		spoke func() conversion.Convertible
	}{
		{func() conversion.Hub { return &v1beta2.ClusterQueue{} }, func() conversion.Convertible { return &ClusterQueue{} }},
		{func() conversion.Hub { return &v1beta2.LocalQueue{} }, func() conversion.Convertible { return &LocalQueue{} }},
		{func() conversion.Hub { return &v1beta2.Workload{} }, func() conversion.Convertible { return &Workload{} }},
		{func() conversion.Hub { return &v1beta2.AdmissionCheck{} }, func() conversion.Convertible { return &AdmissionCheck{} }},
		{func() conversion.Hub { return &v1beta2.MultiKueueCluster{} }, func() conversion.Convertible { return &MultiKueueCluster{} }},
		{func() conversion.Hub { return &v1beta2.ResourceFlavor{} }, func() conversion.Convertible { return &ResourceFlavor{} }},
		{func() conversion.Hub { return &v1beta2.Cohort{} }, func() conversion.Convertible { return &Cohort{} }},
		{func() conversion.Hub { return &v1beta2.WorkloadPriorityClass{} }, func() conversion.Convertible { return &WorkloadPriorityClass{} }},
		{func() conversion.Hub { return &v1beta2.Topology{} }, func() conversion.Convertible { return &Topology{} }},
		{func() conversion.Hub { return &v1beta2.ProvisioningRequestConfig{} }, func() conversion.Convertible { return &ProvisioningRequestConfig{} }},
		{func() conversion.Hub { return &v1beta2.MultiKueueConfig{} }, func() conversion.Convertible { return &MultiKueueConfig{} }},
	}
	filler := randfill.NewWithSeed(1).NilChance(0.3).NumElements(0, 2).Funcs(
		// The values each version can say: a priority class reference names
		// one of the two kinds; fungibility is one of v1beta2's policies.
		func(ref *v1beta2.PriorityClassRef, c randfill.Continue) {
			c.FillNoCustom(ref)
			if c.Bool() {
				ref.Group, ref.Kind = v1beta2.WorkloadPriorityClassGroup, v1beta2.WorkloadPriorityClassKind
			} else {
				ref.Group, ref.Kind = v1beta2.PodPriorityClassGroup, v1beta2.PodPriorityClassKind
			}
		},
		func(p *v1beta2.FlavorFungibilityPolicy, c randfill.Continue) {
			*p = []v1beta2.FlavorFungibilityPolicy{v1beta2.MayStopSearch, v1beta2.TryNextFlavor}[c.Intn(2)]
		},
		// Kinds are not part of what is converted (the scheme sets them).
		func(tm *metav1.TypeMeta, c randfill.Continue) {},
		func(raw *runtime.RawExtension, c randfill.Continue) { raw.Raw = []byte(`{"k":"v"}`) },
		func(q *resource.Quantity, c randfill.Continue) {
			*q = *resource.NewQuantity(c.Int63n(1000), resource.DecimalSI)
		},
		func(tm *metav1.Time, c randfill.Continue) { *tm = metav1.Unix(c.Int63n(1<<31), 0) },
	)
	for _, p := range pairs {
		for range 40 {
			want := p.hub()
			filler.Fill(want)
			spoke := p.spoke()
			if err := spoke.ConvertFrom(want); err != nil {
				t.Fatal(err)
			}
			got := p.hub()
			if err := spoke.ConvertTo(got); err != nil {
				t.Fatal(err)
			}
			if !apiequality.Semantic.DeepEqual(got, want) {
				t.Fatalf("%T changed on a trip through v1beta1:\nwant %+v\ngot  %+v", want, want, got)
			}
		}
	}
}

// What v1beta1 says differently arrives in v1beta2's terms.
func TestV1beta1ToV1beta2(t *testing.T) {
	cq := &ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq"}, Spec: ClusterQueueSpec{
		Cohort: "shared", AdmissionChecks: []string{"a", "b"},
		FlavorFungibility: &FlavorFungibility{WhenCanBorrow: Borrow, WhenCanPreempt: Preempt}}}
	got := &v1beta2.ClusterQueue{}
	if err := cq.ConvertTo(got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.CohortName != "shared" || got.Spec.AdmissionChecksStrategy == nil || len(got.Spec.AdmissionChecksStrategy.AdmissionChecks) != 2 ||
		got.Spec.AdmissionChecksStrategy.AdmissionChecks[1].Name != "b" ||
		got.Spec.FlavorFungibility.WhenCanBorrow != v1beta2.MayStopSearch || got.Spec.FlavorFungibility.WhenCanPreempt != v1beta2.MayStopSearch {
		t.Errorf("ClusterQueue spec = %+v", got.Spec)
	}

	wl := &Workload{Spec: WorkloadSpec{PriorityClassSource: WorkloadPriorityClassSource, PriorityClassName: "high", Priority: ptr.To[int32](100)},
		Status: WorkloadStatus{AccumulatedPastExexcutionTimeSeconds: ptr.To[int32](7)}}
	gotWl := &v1beta2.Workload{}
	if err := wl.ConvertTo(gotWl); err != nil {
		t.Fatal(err)
	}
	if ref := gotWl.Spec.PriorityClassRef; ref == nil || ref.Kind != v1beta2.WorkloadPriorityClassKind || ref.Name != "high" ||
		*gotWl.Status.AccumulatedPastExecutionTimeSeconds != 7 {
		t.Errorf("Workload = %+v / %+v", gotWl.Spec.PriorityClassRef, gotWl.Status)
	}
	pod := &Workload{Spec: WorkloadSpec{PriorityClassSource: PodPriorityClassSource, PriorityClassName: "system-critical"}}
	if err := pod.ConvertTo(gotWl); err != nil {
		t.Fatal(err)
	}
	if ref := gotWl.Spec.PriorityClassRef; ref == nil || ref.Group != v1beta2.PodPriorityClassGroup || ref.Name != "system-critical" {
		t.Errorf("pod priority class = %+v", ref)
	}

	lq := &LocalQueue{Status: LocalQueueStatus{FlavorUsage: []v1beta2.LocalQueueFlavorUsage{{Name: "f"}}}}
	gotLq := &v1beta2.LocalQueue{}
	if err := lq.ConvertTo(gotLq); err != nil {
		t.Fatal(err)
	}
	if len(gotLq.Status.FlavorsUsage) != 1 || gotLq.Status.FlavorsUsage[0].Name != "f" {
		t.Errorf("LocalQueue status = %+v", gotLq.Status)
	}

	mkc := &MultiKueueCluster{Spec: MultiKueueClusterSpec{KubeConfig: &v1beta2.KubeConfig{Location: "secret"}}}
	gotMkc := &v1beta2.MultiKueueCluster{}
	if err := mkc.ConvertTo(gotMkc); err != nil {
		t.Fatal(err)
	}
	if gotMkc.Spec.ClusterSource.KubeConfig == nil || gotMkc.Spec.ClusterSource.KubeConfig.Location != "secret" {
		t.Errorf("MultiKueueCluster spec = %+v", gotMkc.Spec)
	}
}
