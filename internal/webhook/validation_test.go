package webhook

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

func rq(name corev1.ResourceName, nominal string) kueue.ResourceQuota {
	return kueue.ResourceQuota{Name: name, NominalQuota: resource.MustParse(nominal)}
}

func group(resources []corev1.ResourceName, flavors ...string) kueue.ResourceGroup {
	rg := kueue.ResourceGroup{CoveredResources: resources}
	for _, f := range flavors {
		fq := kueue.FlavorQuotas{Name: kueue.ResourceFlavorReference(f)}
		for _, r := range resources {
			fq.Resources = append(fq.Resources, rq(r, "1"))
		}
		rg.Flavors = append(rg.Flavors, fq)
	}
	return rg
}

// expectErrors checks that errs holds exactly the wanted field paths, each
// with a detail containing the wanted phrase.
func expectErrors(t *testing.T, errs field.ErrorList, want map[string]string) {
	t.Helper()
	if len(errs) != len(want) {
		t.Fatalf("got %d errors %v, want %d: %v", len(errs), errs, len(want), want)
	}
	for _, err := range errs {
		phrase, ok := want[err.Field]
		if !ok {
			t.Errorf("unexpected error %v", err)
			continue
		}
		if !strings.Contains(err.Error(), phrase) {
			t.Errorf("error %q does not say %q", err.Error(), phrase)
		}
	}
}

func TestValidateClusterQueue(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(cq *kueue.ClusterQueue)
		want   map[string]string
	}{
		{name: "valid", mutate: func(*kueue.ClusterQueue) {}},
		{name: "resource in two groups", mutate: func(cq *kueue.ClusterQueue) {
			cq.Spec.ResourceGroups = append(cq.Spec.ResourceGroups, group([]corev1.ResourceName{"memory"}, "other"))
		}, want: map[string]string{"spec.resourceGroups[1].coveredResources[0]": "one resource group only"}},
		{name: "flavor in two groups", mutate: func(cq *kueue.ClusterQueue) {
			cq.Spec.ResourceGroups = append(cq.Spec.ResourceGroups, group([]corev1.ResourceName{"gpu"}, "default"))
		}, want: map[string]string{"spec.resourceGroups[1].flavors[0].name": "one resource group only"}},
		{name: "negative quotas and lending above nominal", mutate: func(cq *kueue.ClusterQueue) {
			res := cq.Spec.ResourceGroups[0].Flavors[0].Resources
			res[0].NominalQuota = resource.MustParse("-1")
			res[1].BorrowingLimit = ptr.To(resource.MustParse("-2"))
			res[1].LendingLimit = ptr.To(resource.MustParse("3"))
		}, want: map[string]string{
			"spec.resourceGroups[0].flavors[0].resources[0].nominalQuota":   "greater than or equal to 0",
			"spec.resourceGroups[0].flavors[0].resources[1].borrowingLimit": "greater than or equal to 0",
			"spec.resourceGroups[0].flavors[0].resources[1].lendingLimit":   "less than or equal to nominalQuota (1)",
		}},
		{name: "limits without a cohort", mutate: func(cq *kueue.ClusterQueue) {
			cq.Spec.CohortName = ""
			cq.Spec.ResourceGroups[0].Flavors[0].Resources[0].BorrowingLimit = ptr.To(resource.MustParse("1"))
		}, want: map[string]string{"spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit": "requires cohortName"}},
		{name: "invalid names and selector", mutate: func(cq *kueue.ClusterQueue) {
			cq.Spec.CohortName = "Bad Cohort"
			cq.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"bad key!": "x"}}
			cq.Spec.ResourceGroups[0].CoveredResources[0] = "bad resource!"
			cq.Spec.ResourceGroups[0].Flavors[0].Resources[0].Name = "bad resource!"
		}, want: map[string]string{
			"spec.cohortName":                            "RFC 1123",
			"spec.namespaceSelector.matchLabels":         "name part",
			"spec.resourceGroups[0].coveredResources[0]": "name part",
		}},
		{name: "too many flavors over groups", mutate: func(cq *kueue.ClusterQueue) {
			cq.Spec.ResourceGroups = nil
			for g := range 5 {
				var flavors []string
				for f := range 60 {
					flavors = append(flavors, "f"+string(rune('a'+g))+strings.Repeat("x", f))
				}
				cq.Spec.ResourceGroups = append(cq.Spec.ResourceGroups, group([]corev1.ResourceName{corev1.ResourceName("r" + string(rune('a'+g)))}, flavors...))
			}
		}, want: map[string]string{"spec.resourceGroups": "at most 256 flavors"}},
		{name: "negative weight", mutate: func(cq *kueue.ClusterQueue) {
			cq.Spec.FairSharing = &kueue.FairSharing{Weight: ptr.To(resource.MustParse("-1"))}
		}, want: map[string]string{"spec.fairSharing.weight": "greater than or equal to 0"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cq := &kueue.ClusterQueue{Spec: kueue.ClusterQueueSpec{
				CohortName:     "pool",
				ResourceGroups: []kueue.ResourceGroup{group([]corev1.ResourceName{"cpu", "memory"}, "default")},
			}}
			tc.mutate(cq)
			expectErrors(t, ValidateClusterQueue(cq), tc.want)
		})
	}
}

func TestValidateResourceFlavor(t *testing.T) {
	cases := []struct {
		name string
		spec kueue.ResourceFlavorSpec
		want map[string]string
	}{
		{name: "valid", spec: kueue.ResourceFlavorSpec{
			NodeLabels:  map[string]string{"example.com/pool": "a"},
			NodeTaints:  []corev1.Taint{{Key: "gpu", Effect: corev1.TaintEffectNoSchedule}},
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}, {Key: "k", Value: "v", Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](5)}},
		}},
		{name: "bad label value", spec: kueue.ResourceFlavorSpec{NodeLabels: map[string]string{"pool": "a b"}},
			want: map[string]string{"spec.nodeLabels[pool]": "label value"}},
		{name: "taint without key", spec: kueue.ResourceFlavorSpec{NodeTaints: []corev1.Taint{{Effect: corev1.TaintEffectNoSchedule}}},
			want: map[string]string{"spec.nodeTaints[0].key": "Required"}},
		{name: "tolerations", spec: kueue.ResourceFlavorSpec{Tolerations: []corev1.Toleration{
			{Operator: corev1.TolerationOpEqual, Value: "v"},
			{Key: "k", Operator: "Near"},
			{Key: "k", Effect: "NoRun"},
			{Key: "k", Effect: corev1.TaintEffectNoSchedule, TolerationSeconds: ptr.To[int64](1)},
		}}, want: map[string]string{
			"spec.tolerations[0].operator": "must be Exists when key is empty",
			"spec.tolerations[1].operator": "Unsupported value",
			"spec.tolerations[2].effect":   "Unsupported value",
			"spec.tolerations[3].effect":   "must be NoExecute when tolerationSeconds is set",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			expectErrors(t, ValidateResourceFlavor(&kueue.ResourceFlavor{Spec: tc.spec}), tc.want)
		})
	}
}

func TestValidateWorkloadUpdate(t *testing.T) {
	base := func() *kueue.Workload {
		return &kueue.Workload{Spec: kueue.WorkloadSpec{
			QueueName: "q",
			PodSets: []kueue.PodSet{{Name: "main", Count: 3, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "c"}},
			}}}},
		}}
	}
	reserved := func() *kueue.Workload {
		wl := base()
		wl.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue}}
		wl.Status.Admission = &kueue.Admission{ClusterQueue: "cq", PodSetAssignments: []kueue.PodSetAssignment{{Name: "main", Count: ptr.To[int32](3)}}}
		wl.Status.ReclaimablePods = []kueue.ReclaimablePod{{Name: "main", Count: 1}}
		return wl
	}
	cases := []struct {
		name   string
		old    func() *kueue.Workload
		mutate func(wl *kueue.Workload)
		want   map[string]string
	}{
		{name: "pending workload may change", old: base, mutate: func(wl *kueue.Workload) {
			wl.Spec.QueueName = "other"
			wl.Spec.PodSets[0].Count = 5
		}},
		{name: "reserved workload keeps queue and podSets", old: reserved, mutate: func(wl *kueue.Workload) {
			wl.Spec.QueueName = "other"
			wl.Spec.PodSets[0].Count = 5
		}, want: map[string]string{"spec.queueName": "immutable", "spec.podSets": "immutable"}},
		{name: "admission cannot be rewritten", old: reserved, mutate: func(wl *kueue.Workload) {
			wl.Status.Admission.ClusterQueue = "other"
		}, want: map[string]string{"status.admission": "immutable once set"}},
		{name: "admission can be cleared", old: reserved, mutate: func(wl *kueue.Workload) {
			wl.Status.Admission = nil
			wl.Status.Conditions = nil
			wl.Status.ReclaimablePods = nil
		}},
		{name: "reclaimable pods only grow", old: reserved, mutate: func(wl *kueue.Workload) {
			wl.Status.ReclaimablePods = nil
		}, want: map[string]string{"status.reclaimablePods[main]": "can't decrease from 1 to 0"}},
		{name: "reclaimable pods within count", old: reserved, mutate: func(wl *kueue.Workload) {
			wl.Status.ReclaimablePods[0].Count = 4
		}, want: map[string]string{"status.reclaimablePods[0].count": "must not exceed the podSet's count (3)"}},
		{name: "pods resource is reserved", old: base, mutate: func(wl *kueue.Workload) {
			wl.Spec.PodSets[0].Template.Spec.InitContainers = []corev1.Container{{Name: "i", Resources: corev1.ResourceRequirements{
				Limits: corev1.ResourceList{"pods": resource.MustParse("1")}}}}
		}, want: map[string]string{"spec.podSets[0].template.spec.initContainers[0].resources.limits[pods]": "reserved"}},
		{name: "assignment names a podSet", old: base, mutate: func(wl *kueue.Workload) {
			wl.Status.Admission = &kueue.Admission{ClusterQueue: "cq", PodSetAssignments: []kueue.PodSetAssignment{{Name: "ghost"}}}
		}, want: map[string]string{"status.admission.podSetAssignments[0].name": "Not found"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			oldWl := tc.old()
			newWl := oldWl.DeepCopy()
			tc.mutate(newWl)
			expectErrors(t, ValidateWorkloadUpdate(oldWl, newWl), tc.want)
		})
	}
}
