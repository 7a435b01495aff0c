package appwrapper

import (
	"encoding/json"
	"strings"
	"testing"

	awv1beta2 "github.com/project-codeflare/appwrapper/api/v1beta2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
)

func podSpec(cpu string) corev1.PodSpec {
	return corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "i",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}
}

func trainingJob(name string, parallelism int32) *batchv1.Job {
	return &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}, ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{Parallelism: ptr.To(parallelism), Completions: ptr.To(parallelism),
			Template: corev1.PodTemplateSpec{Spec: podSpec("1")}}}
}

func raw(t *testing.T, obj any) runtime.RawExtension {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return runtime.RawExtension{Raw: data}
}

// newAppWrapper wraps a Job of two 1-CPU pods and a 500m Pod.
func newAppWrapper(t *testing.T) *awv1beta2.AppWrapper {
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: "driver"}, Spec: podSpec("500m")}
	return &awv1beta2.AppWrapper{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "Train.Run"}, Spec: awv1beta2.AppWrapperSpec{
		Suspend: true,
		Components: []awv1beta2.AppWrapperComponent{
			{Template: raw(t, trainingJob("workers", 2))},
			{Template: raw(t, pod)},
		},
	}}
}

func TestPodSetsAreTheComponents(t *testing.T) {
	aw := &AppWrapper{newAppWrapper(t)}
	podSets, err := aw.PodSets()
	if err != nil {
		t.Fatal(err)
	}
	if len(podSets) != 2 || podSets[0].Name != "train-run-0" || podSets[0].Count != 2 || podSets[1].Name != "train-run-1" || podSets[1].Count != 1 {
		t.Fatalf("pod sets %+v, want train-run-0=2 (the Job) and train-run-1=1 (the Pod)", podSets)
	}
	if got := podSetName(strings.Repeat("x", 80), 7); len(got) != 63 || !strings.HasSuffix(string(got), "-7") {
		t.Errorf("a long name's pod set %q: want 63 characters ending in -7", got)
	}
}

func TestRunGivesAdmissionToTheControllerAndRestoreTakesItBack(t *testing.T) {
	aw := &AppWrapper{newAppWrapper(t)}
	infos := []integration.PodSetInfo{{Name: "train-run-0", NodeSelector: map[string]string{"pool": "a"}}, {Name: "train-run-1", Labels: map[string]string{kueue.PodSetLabel: "train-run-1"}}}
	if err := aw.Run(infos); err != nil {
		t.Fatal(err)
	}
	if aw.Spec.Suspend || aw.Spec.Components[0].PodSetInfos[0].NodeSelector["pool"] != "a" || aw.Spec.Components[1].PodSetInfos[0].Labels[kueue.PodSetLabel] != "train-run-1" {
		t.Fatalf("after Run: suspend %v, podSetInfos %+v %+v", aw.Spec.Suspend, aw.Spec.Components[0].PodSetInfos, aw.Spec.Components[1].PodSetInfos)
	}
	if len(aw.Status.ComponentStatus) != 0 {
		t.Error("Run wrote the AppWrapper controller's status")
	}
	if err := aw.Run(infos[:1]); err == nil {
		t.Error("an admission of fewer pod sets than the AppWrapper's: no error")
	}
	if !aw.Restore(nil) || aw.Spec.Components[0].PodSetInfos != nil || aw.Restore(nil) {
		t.Error("Restore did not clear the podSetInfos once, and only once")
	}
}

// The AppWrapper makes its components as its controller creates them, no
// larger than they were declared.
func TestMakesItsComponents(t *testing.T) {
	aw := newAppWrapper(t)
	larger := trainingJob("workers", 2)
	larger.Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("2")
	for name, tc := range map[string]struct {
		child client.Object
		made  bool
	}{
		"the Job component":        {trainingJob("workers", 2), true},
		"fewer pods":               {trainingJob("workers", 1), true},
		"more pods":                {trainingJob("workers", 3), false},
		"larger pods":              {larger, false},
		"another name":             {trainingJob("extra", 2), false},
		"the Pod component":        {&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "driver"}, Spec: podSpec("500m")}, true},
		"a Pod named like the Job": {&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "workers"}, Spec: podSpec("1")}, false},
	} {
		if got := makes(aw, tc.child); got != tc.made {
			t.Errorf("%s: made %v, want %v", name, got, tc.made)
		}
	}
	// A generated name is the one the AppWrapper controller recorded.
	generated := trainingJob("", 2)
	generated.GenerateName = "workers-"
	aw.Spec.Components[0].Template = raw(t, generated)
	aw.Status.ComponentStatus = []awv1beta2.AppWrapperComponentStatus{{Name: "workers-x7k2p", Kind: "Job", APIVersion: "batch/v1"}}
	if !makes(aw, trainingJob("workers-x7k2p", 2)) || makes(aw, trainingJob("workers-other", 2)) {
		t.Error("a component of a generated name: not told by the recorded name")
	}
}

func TestValidate(t *testing.T) {
	nested := newAppWrapper(t)
	nested.Spec.Components = append(nested.Spec.Components, awv1beta2.AppWrapperComponent{Template: raw(t, &awv1beta2.AppWrapper{
		TypeMeta: metav1.TypeMeta{APIVersion: awv1beta2.GroupVersion.String(), Kind: awv1beta2.AppWrapperKind}, ObjectMeta: metav1.ObjectMeta{Name: "inner"}})})
	elsewhere := newAppWrapper(t)
	job := trainingJob("workers", 2)
	job.Namespace = "other"
	elsewhere.Spec.Components[0].Template = raw(t, job)
	wrongCount := newAppWrapper(t)
	wrongCount.Spec.Components[0].DeclaredPodSets = []awv1beta2.AppWrapperPodSet{{Path: "template.spec.template", Replicas: ptr.To(int32(1))}}
	badPath := newAppWrapper(t)
	badPath.Spec.Components[0].DeclaredPodSets = []awv1beta2.AppWrapperPodSet{{Path: "template.spec.nothing", Replicas: ptr.To(int32(2))}}
	empty := newAppWrapper(t)
	empty.Spec.Components = []awv1beta2.AppWrapperComponent{{Template: raw(t, &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: "c"}})}}
	for name, tc := range map[string]struct {
		aw   *awv1beta2.AppWrapper
		want string
	}{
		"nested":                      {nested, "spec.components[2].template: Forbidden"},
		"another namespace":           {elsewhere, "spec.components[0].template.metadata.namespace: Forbidden"},
		"declared count not inferred": {wrongCount, "spec.components[0].podSets: Invalid"},
		"a path to no pod template":   {badPath, "spec.components[0].podSets[0].path: Invalid"},
		"no pods":                     {empty, "spec.components: Required"},
	} {
		if errs := validate(tc.aw); !strings.Contains(errs.ToAggregate().Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, errs, tc.want)
		}
	}
	if errs := validate(newAppWrapper(t)); len(errs) > 0 {
		t.Errorf("a valid AppWrapper: %v", errs)
	}
}
