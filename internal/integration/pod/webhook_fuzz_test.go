package pod

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// FuzzValidatePod: the Pod webhook's own rules (standalone, group name and
// count) and the group's pod sets answer any decodable Pod with errors,
// never a panic.
func FuzzValidatePod(f *testing.F) {
	f.Add([]byte(`{"metadata":{"labels":{"kueue.x-k8s.io/pod-group-name":"g"},"annotations":{"kueue.x-k8s.io/pod-group-total-count":"99999999999999999999","kueue.x-k8s.io/standalone":"no"}}}`))
	f.Add([]byte(`{"metadata":{"annotations":{"kueue.x-k8s.io/pod-group-total-count":"-1"}},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"4Ei"}}}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var p corev1.Pod
		if json.Unmarshal(data, &p) != nil {
			return
		}
		_ = validateStandalone(&p)
		_ = validateGroup(&p)
		_ = groupPodSets([]corev1.Pod{p}, 2)
		_ = shapeOf(&p)
	})
}
