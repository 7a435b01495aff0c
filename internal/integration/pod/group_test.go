package pod

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
)

func podOf(cpu string, labels, annotations map[string]string) corev1.Pod {
	seconds := int64(300)
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}},
		// As the API server defaults them: pointers inside.
		Tolerations: []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, TolerationSeconds: &seconds}},
	}}
}

func TestGroupPodSets(t *testing.T) {
	pods := []corev1.Pod{podOf("1", nil, nil), podOf("1", nil, nil), podOf("2", nil, nil)}
	got := groupPodSets(pods, 3)
	if len(got) != 2 {
		t.Fatalf("%d podSets, want 2 shapes", len(got))
	}
	counts := map[int32]bool{got[0].Count: true, got[1].Count: true}
	if !counts[1] || !counts[2] {
		t.Errorf("counts %d and %d, want 2 (1 CPU) and 1 (2 CPU)", got[0].Count, got[1].Count)
	}
	if diff := cmp.Diff(got, groupPodSets(pods, 3)); diff != "" {
		t.Errorf("podSets differ between two builds of the same group (-first +second):\n%s", diff)
	}
	// Fast admission: Pods not created yet count in the first shape.
	if fast := groupPodSets(pods[:1], 3); len(fast) != 1 || fast[0].Count != 3 {
		t.Errorf("fast admission podSets %+v, want one of 3", fast)
	}
}

// admittedWorkload is a Workload of podSets whose quota is reserved.
func admittedWorkload(podSets ...kueue.PodSet) *kueue.Workload {
	wl := &kueue.Workload{
		Spec:   kueue.WorkloadSpec{PodSets: podSets},
		Status: kueue.WorkloadStatus{Admission: &kueue.Admission{ClusterQueue: "cq"}},
	}
	meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved"})
	return wl
}

func TestAdmittedGroupReportsItsSizeAgainstTheAdmission(t *testing.T) {
	admitted := func(reclaimable ...kueue.ReclaimablePod) *kueue.Workload {
		wl := admittedWorkload(kueue.PodSet{Name: "a", Count: 2}, kueue.PodSet{Name: "b", Count: 3})
		wl.Status.ReclaimablePods = reclaimable
		return wl
	}
	cases := []struct {
		name    string
		wl      *kueue.Workload
		desired int
		want    []int32
	}{
		{"as admitted", admitted(), 5, []int32{2, 3}},
		{"shrunk: places freed from the last podSet", admitted(), 3, []int32{2, 1}},
		{"shrunk into the previous podSet", admitted(), 1, []int32{1, 0}},
		{"grown: beyond the admission", admitted(), 7, []int32{4, 3}},
		// Places already reclaimed are no longer the group's: growing back
		// into them must go through admission again.
		{"grown back into reclaimed places", admitted(kueue.ReclaimablePod{Name: "b", Count: 2}), 4, []int32{3, 3}},
		{"within what is left", admitted(kueue.ReclaimablePod{Name: "b", Count: 2}), 3, []int32{2, 1}},
		{"size unknown: nothing given back", admitted(), 0, []int32{2, 3}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := &group{name: "g", pods: []corev1.Pod{podOf("1", nil, nil)}, desired: tc.desired, sizedByKind: true, wl: tc.wl}
			podSets, err := g.PodSets()
			if err != nil {
				t.Fatal(err)
			}
			var got []int32
			for _, ps := range podSets {
				got = append(got, ps.Count)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("counts (-want +got):\n%s", diff)
			}
			if tc.wl.Spec.PodSets[0].Count != 2 || tc.wl.Spec.PodSets[1].Count != 3 {
				t.Error("PodSets changed the Workload")
			}
		})
	}
}

func TestValidateGroup(t *testing.T) {
	name := map[string]string{kueue.PodGroupNameLabel: "g"}
	cases := []struct {
		name        string
		labels      map[string]string
		annotations map[string]string
		want        string
	}{
		{"no group", nil, nil, ""},
		{"name and count", name, map[string]string{kueue.PodGroupTotalCountAnno: "3"}, ""},
		{"name alone", name, nil, kueue.PodGroupTotalCountAnno},
		{"count alone", nil, map[string]string{kueue.PodGroupTotalCountAnno: "3"}, kueue.PodGroupNameLabel},
		{"count zero", name, map[string]string{kueue.PodGroupTotalCountAnno: "0"}, "positive integer"},
		{"name not a name", map[string]string{kueue.PodGroupNameLabel: "Not_A_Name"}, map[string]string{kueue.PodGroupTotalCountAnno: "1"}, "valid Workload name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := podOf("1", tc.labels, tc.annotations)
			errs := validateGroup(&p)
			switch {
			case tc.want == "" && len(errs) > 0:
				t.Errorf("unexpected errors %v", errs)
			case tc.want != "" && (len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), tc.want)):
				t.Errorf("errors %v, want one mentioning %q", errs, tc.want)
			}
		})
	}
}

func TestAnnotatedGroupDoesNotShrinkWhileAdmitted(t *testing.T) {
	wl := admittedWorkload(kueue.PodSet{Name: "a", Count: 3})
	for _, tc := range []struct {
		desired int
		want    int32
	}{{1, 3}, {3, 3}, {4, 4}} {
		g := &group{name: "g", pods: []corev1.Pod{podOf("1", nil, nil)}, desired: tc.desired, wl: wl}
		podSets, _ := g.PodSets()
		if podSets[0].Count != tc.want {
			t.Errorf("announced %d: count %d, want %d", tc.desired, podSets[0].Count, tc.want)
		}
	}
}

func TestAnnotatedTotalIsTheLargest(t *testing.T) {
	count := func(n string) *corev1.Pod {
		p := podOf("1", nil, map[string]string{kueue.PodGroupTotalCountAnno: n})
		return &p
	}
	if got := annotatedTotal([]*corev1.Pod{count("3"), count("1"), count("x")}); got != 3 {
		t.Errorf("total %d, want 3 (a member saying less can't shrink the group)", got)
	}
	if got := annotatedTotal([]*corev1.Pod{count("x")}); got != 0 {
		t.Errorf("total %d, want 0 when none is readable", got)
	}
}

func TestShrunkGroupDoesNotStartPodsInPlacesItGaveBack(t *testing.T) {
	pods := []corev1.Pod{podOf("1", nil, nil), podOf("1", nil, nil)}
	pods[1].Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: kueue.AdmissionSchedulingGate}}
	name := kueue.PodSetReference(shapeOf(&pods[1]))
	wl := &kueue.Workload{Status: kueue.WorkloadStatus{ReclaimablePods: []kueue.ReclaimablePod{{Name: name, Count: 2}}}}
	g := &group{name: "g", pods: pods, desired: 1, wl: wl}
	// Admitted for 3, 2 of them given back, 1 running: no place is left.
	if err := g.Run([]integration.PodSetInfo{{Name: name, Count: 3}}); err != nil {
		t.Fatal(err)
	}
	if len(g.Changed()) != 0 || !gated(&pods[1]) {
		t.Error("a Pod started in a place the group gave back")
	}
	wl.Status.ReclaimablePods[0].Count = 1
	if err := g.Run([]integration.PodSetInfo{{Name: name, Count: 3}}); err != nil {
		t.Fatal(err)
	}
	if len(g.Changed()) != 1 || gated(&pods[1]) {
		t.Error("the Pod did not start in the place left")
	}
}
