package pod

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
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
	if again := groupPodSets(pods, 3); !reflect.DeepEqual(got, again) {
		t.Error("podSets differ between two builds of the same group")
	}
	// Fast admission: Pods not created yet count in the first shape.
	if fast := groupPodSets(pods[:1], 3); len(fast) != 1 || fast[0].Count != 3 {
		t.Errorf("fast admission podSets %+v, want one of 3", fast)
	}
}

func TestShrink(t *testing.T) {
	podSets := []kueue.PodSet{{Name: "a", Count: 2}, {Name: "b", Count: 3}}
	cases := []struct {
		name    string
		current []kueue.ReclaimablePod
		n       int32
		want    []kueue.ReclaimablePod
	}{
		{"from the last podSet", nil, 2, []kueue.ReclaimablePod{{Name: "b", Count: 2}}},
		{"spilling into the previous one", nil, 4, []kueue.ReclaimablePod{{Name: "b", Count: 3}, {Name: "a", Count: 1}}},
		{"on top of what is reclaimable already", []kueue.ReclaimablePod{{Name: "b", Count: 1}}, 1, []kueue.ReclaimablePod{{Name: "b", Count: 2}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := shrink(podSets, tc.current, tc.n); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("shrink = %v, want %v", got, tc.want)
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
