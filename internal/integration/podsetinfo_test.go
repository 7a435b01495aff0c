package integration

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

var spotToleration = corev1.Toleration{Key: "spot", Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule}

func flavors() map[kueue.ResourceFlavorReference]*kueue.ResourceFlavor {
	return map[kueue.ResourceFlavorReference]*kueue.ResourceFlavor{
		"on-demand": {ObjectMeta: metav1.ObjectMeta{Name: "on-demand"}, Spec: kueue.ResourceFlavorSpec{NodeLabels: map[string]string{"instance-type": "on-demand"}}},
		"spot": {ObjectMeta: metav1.ObjectMeta{Name: "spot"}, Spec: kueue.ResourceFlavorSpec{
			NodeLabels: map[string]string{"instance-type": "spot"}, Tolerations: []corev1.Toleration{spotToleration}}},
		"gpu": {ObjectMeta: metav1.ObjectMeta{Name: "gpu"}, Spec: kueue.ResourceFlavorSpec{NodeLabels: map[string]string{"accelerator": "a100"}}},
	}
}

func admission(assignments ...kueue.PodSetAssignment) *kueue.Admission {
	return &kueue.Admission{ClusterQueue: "cq", PodSetAssignments: assignments}
}

func assigned(name string, count int32, byResource map[corev1.ResourceName]kueue.ResourceFlavorReference) kueue.PodSetAssignment {
	return kueue.PodSetAssignment{Name: kueue.PodSetReference(name), Flavors: byResource, Count: ptr.To(count)}
}

func TestFromAdmission(t *testing.T) {
	cases := []struct {
		name    string
		adm     *kueue.Admission
		updates []kueue.PodSetUpdate
		want    []PodSetInfo
		wantErr string
	}{
		{
			name: "one flavor for all resources, injected once",
			adm:  admission(assigned("main", 3, map[corev1.ResourceName]kueue.ResourceFlavorReference{"cpu": "spot", "memory": "spot"})),
			want: []PodSetInfo{{Name: "main", Count: 3, NodeSelector: map[string]string{"instance-type": "spot"}, Tolerations: []corev1.Toleration{spotToleration}}},
		},
		{
			name: "two flavors in two resource groups",
			adm:  admission(assigned("main", 1, map[corev1.ResourceName]kueue.ResourceFlavorReference{"cpu": "on-demand", "nvidia.com/gpu": "gpu"})),
			want: []PodSetInfo{{Name: "main", Count: 1, NodeSelector: map[string]string{"instance-type": "on-demand", "accelerator": "a100"}}},
		},
		{
			name: "admission check updates join the flavor's",
			adm:  admission(assigned("main", 2, map[corev1.ResourceName]kueue.ResourceFlavorReference{"cpu": "on-demand"})),
			updates: []kueue.PodSetUpdate{
				{Name: "main", Labels: map[string]string{"team": "a"}, Annotations: map[string]string{"note": "x"}, NodeSelector: map[string]string{"zone": "z1"}},
				{Name: "other", Labels: map[string]string{"ignored": "yes"}},
			},
			want: []PodSetInfo{{Name: "main", Count: 2, Labels: map[string]string{"team": "a"}, Annotations: map[string]string{"note": "x"},
				NodeSelector: map[string]string{"instance-type": "on-demand", "zone": "z1"}}},
		},
		{
			name:    "an update contradicting the flavor",
			adm:     admission(assigned("main", 1, map[corev1.ResourceName]kueue.ResourceFlavorReference{"cpu": "spot"})),
			updates: []kueue.PodSetUpdate{{Name: "main", NodeSelector: map[string]string{"instance-type": "on-demand"}}},
			wantErr: "needs instance-type=on-demand, but it is already instance-type=spot",
		},
		{
			name:    "a flavor that is gone",
			adm:     admission(assigned("main", 1, map[corev1.ResourceName]kueue.ResourceFlavorReference{"cpu": "vanished"})),
			wantErr: "ResourceFlavor vanished not found",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FromAdmission(tc.adm, flavors(), tc.updates)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("FromAdmission (-want +got):\n%s", diff)
			}
		})
	}
}

func template() *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "train"}},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"kubernetes.io/os": "linux"},
			Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}},
		},
	}
}

func TestInjectAndRestore(t *testing.T) {
	tmpl := template()
	original := Original("main", 3, tmpl)
	info := PodSetInfo{Name: "main", Labels: map[string]string{"kueue.x-k8s.io/podset": "main"},
		NodeSelector: map[string]string{"instance-type": "spot"}, Tolerations: []corev1.Toleration{spotToleration, spotToleration}}
	if err := Inject(tmpl, info); err != nil {
		t.Fatal(err)
	}
	if tmpl.Spec.NodeSelector["instance-type"] != "spot" || tmpl.Spec.NodeSelector["kubernetes.io/os"] != "linux" {
		t.Errorf("nodeSelector after Inject = %v, want the flavor's label added to the user's", tmpl.Spec.NodeSelector)
	}
	if len(tmpl.Spec.Tolerations) != 2 || tmpl.Labels["kueue.x-k8s.io/podset"] != "main" || tmpl.Labels["app"] != "train" {
		t.Errorf("after Inject: tolerations %v, labels %v", tmpl.Spec.Tolerations, tmpl.Labels)
	}

	encoded, err := EncodeOriginals([]PodSetInfo{original})
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := DecodeOriginals(encoded)
	if err != nil {
		t.Fatal(err)
	}
	if !Restore(tmpl, decoded[0]) {
		t.Error("Restore reported no change after an injection")
	}
	if diff := cmp.Diff(template(), tmpl); diff != "" {
		t.Errorf("after Restore (-original +restored):\n%s", diff)
	}
	if Restore(tmpl, decoded[0]) {
		t.Error("a second Restore reported a change")
	}
}

func TestInjectRefusesAConflictingSelector(t *testing.T) {
	tmpl := template()
	tmpl.Spec.NodeSelector["instance-type"] = "on-demand"
	err := Inject(tmpl, PodSetInfo{Name: "main", NodeSelector: map[string]string{"instance-type": "spot"}})
	if err == nil || !strings.Contains(err.Error(), "podSet main") || !strings.Contains(err.Error(), "instance-type=on-demand") {
		t.Fatalf("Inject = %v, want a conflict naming the pod set and both values", err)
	}
}

func TestDecodeOriginalsRejectsGarbage(t *testing.T) {
	if _, err := DecodeOriginals("{not json"); err == nil || !strings.Contains(err.Error(), "original pod-set info") {
		t.Fatalf("DecodeOriginals = %v, want an error saying what could not be read", err)
	}
}
