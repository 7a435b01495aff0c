package workload

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

func container(cpu, limit string) corev1.Container {
	c := corev1.Container{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}}
	if cpu != "" {
		c.Resources.Requests[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if limit != "" {
		c.Resources.Limits[corev1.ResourceCPU] = resource.MustParse(limit)
	}
	return c
}

func sidecar(cpu string) corev1.Container {
	c := container(cpu, "")
	always := corev1.ContainerRestartPolicyAlways
	c.RestartPolicy = &always
	return c
}

func TestPodRequests(t *testing.T) {
	cases := []struct {
		name string
		spec corev1.PodSpec
		want int64 // milli-cpu
	}{
		{"containers add up", corev1.PodSpec{Containers: []corev1.Container{container("1", ""), container("500m", "")}}, 1500},
		{"limit stands in for a missing request", corev1.PodSpec{Containers: []corev1.Container{container("", "2")}}, 2000},
		{"request wins over limit", corev1.PodSpec{Containers: []corev1.Container{container("1", "2")}}, 1000},
		{"a larger init container dominates", corev1.PodSpec{
			InitContainers: []corev1.Container{container("3", "")},
			Containers:     []corev1.Container{container("1", "")}}, 3000},
		{"a smaller init container does not", corev1.PodSpec{
			InitContainers: []corev1.Container{container("500m", "")},
			Containers:     []corev1.Container{container("1", "")}}, 1000},
		{"sidecars run beside the containers", corev1.PodSpec{
			InitContainers: []corev1.Container{sidecar("1")},
			Containers:     []corev1.Container{container("1", "")}}, 2000},
		{"an init container after a sidecar runs beside it", corev1.PodSpec{
			InitContainers: []corev1.Container{sidecar("1"), container("3", "")},
			Containers:     []corev1.Container{container("1", "")}}, 4000},
		{"overhead is added", corev1.PodSpec{
			Containers: []corev1.Container{container("1", "")},
			Overhead:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}}, 1250},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := PodRequests(&tc.spec)[corev1.ResourceCPU]; got != tc.want {
				t.Errorf("cpu = %dm, want %dm", got, tc.want)
			}
		})
	}
}

func TestShapeIgnoresPointerIdentity(t *testing.T) {
	build := func() *Info {
		seconds := int64(300)
		wl := &kueue.Workload{}
		wl.Namespace, wl.Name = "ns", "w"
		wl.Spec.PodSets = []kueue.PodSet{{Name: "main", Count: 1, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Tolerations: []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, TolerationSeconds: &seconds}},
		}}}}
		return NewInfo(wl)
	}
	if a, b := build(), build(); a.Shape != b.Shape {
		t.Errorf("equal workloads have shapes %s and %s", a.Shape, b.Shape)
	}
}
