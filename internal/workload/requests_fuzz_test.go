package workload

import (
	"math"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/sluicehq/sluice/internal/quota"
)

// FuzzPodRequests feeds arbitrary quantities (as users write them) to the
// request computation of a pod with a container, a sidecar, an init
// container and overhead. It must never panic, never give a negative
// amount, and a pod's requests times its count never falls below the
// pod's own (no wrap-around); the total of a pod is at least each of its
// containers' requests.
func FuzzPodRequests(f *testing.F) {
	f.Add("1", "500m", "3", "250m", int32(3))
	f.Add("4Ei", "4Ei", "4Ei", "4Ei", int32(3))
	f.Add("9223372036854775807", "1e18", "-5", "0", int32(2147483647))
	f.Fuzz(func(t *testing.T, main, side, init, overhead string, count int32) {
		parse := func(s string) (resource.Quantity, bool) {
			if quota.SlowToParse(s) {
				return resource.Quantity{}, false
			}
			q, err := resource.ParseQuantity(s)
			return q, err == nil
		}
		qMain, ok1 := parse(main)
		qSide, ok2 := parse(side)
		qInit, ok3 := parse(init)
		qOver, ok4 := parse(overhead)
		if !ok1 || !ok2 || !ok3 || !ok4 {
			return
		}
		always := corev1.ContainerRestartPolicyAlways
		req := func(q resource.Quantity) corev1.ResourceRequirements {
			return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q, corev1.ResourceMemory: q}}
		}
		spec := &corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "side", Resources: req(qSide), RestartPolicy: &always}, {Name: "init", Resources: req(qInit)}},
			Containers:     []corev1.Container{{Name: "main", Resources: req(qMain)}},
			Overhead:       corev1.ResourceList{corev1.ResourceCPU: qOver},
		}
		perPod := PodRequests(spec)
		for name, v := range perPod {
			if v < 0 {
				t.Fatalf("%s = %d is negative (main %s, sidecar %s, init %s, overhead %s)", name, v, main, side, init, overhead)
			}
		}
		for _, c := range []resource.Quantity{qMain, qSide} {
			if c.Sign() > 0 && c.Cmp(*resource.NewQuantity(math.MaxInt64/1000, resource.DecimalSI)) < 0 &&
				perPod[corev1.ResourceMemory] < c.Value() {
				t.Fatalf("pod memory %d below a container's %s", perPod[corev1.ResourceMemory], c.String())
			}
		}
		if count < 1 {
			return
		}
		scaled := perPod.Scaled(count)
		for name, v := range perPod {
			if scaled[name] < v {
				t.Fatalf("%s: %d pods of %d make %d (wrapped)", name, count, v, scaled[name])
			}
		}
	})
}
