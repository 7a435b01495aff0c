package leaderworkerset

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	lwsapi "sigs.k8s.io/lws/api/leaderworkerset/v1"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

func pod(parent string, labels, annotations map[string]string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations}}
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	if parent != "" {
		p.Annotations[kueue.PodSuspendingParentAnno] = parent
	}
	return p
}

func TestGroupPods(t *testing.T) {
	group := map[string]string{lwsapi.SetNameLabelKey: "infer", lwsapi.GroupIndexLabelKey: "3"}
	p := pod(Framework, group, map[string]string{lwsapi.SizeAnnotationKey: "4"})
	GroupPods(p)
	if p.Labels[kueue.PodGroupNameLabel] != "leaderworkerset-infer-3" || p.Annotations[kueue.PodGroupTotalCountAnno] != "4" {
		t.Fatalf("labels %v annotations %v, want group leaderworkerset-infer-3 of 4", p.Labels, p.Annotations)
	}
	for name, p := range map[string]*corev1.Pod{
		"another parent":   pod("statefulset", map[string]string{lwsapi.SetNameLabelKey: "a", lwsapi.GroupIndexLabelKey: "0"}, map[string]string{lwsapi.SizeAnnotationKey: "2"}),
		"no group index":   pod(Framework, map[string]string{lwsapi.SetNameLabelKey: "a"}, map[string]string{lwsapi.SizeAnnotationKey: "2"}),
		"size not a count": pod(Framework, map[string]string{lwsapi.SetNameLabelKey: "a", lwsapi.GroupIndexLabelKey: "0"}, map[string]string{lwsapi.SizeAnnotationKey: "0"}),
	} {
		GroupPods(p)
		if _, ok := p.Labels[kueue.PodGroupNameLabel]; ok {
			t.Errorf("%s: grouped as %s", name, p.Labels[kueue.PodGroupNameLabel])
		}
	}
}

func TestGroupNameFitsALabel(t *testing.T) {
	long := strings.Repeat("a", 80)
	a, b := GroupName(long, "1"), GroupName(long, "2")
	if len(a) > 63 || a == b {
		t.Fatalf("group names %q and %q: want distinct label values", a, b)
	}
}
