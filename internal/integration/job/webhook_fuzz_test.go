package job

import (
	"encoding/json"
	"testing"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/sluicehq/sluice/internal/integration"
)

// FuzzValidateJob: the Job webhook's own rules (queue-name, min-parallelism,
// standalone) and its pod sets answer any decodable Job with errors, never
// a panic.
func FuzzValidateJob(f *testing.F) {
	f.Add([]byte(`{"metadata":{"labels":{"kueue.x-k8s.io/queue-name":"Not_A_Name"},"annotations":{"kueue.x-k8s.io/job-min-parallelism":"-9223372036854775808","kueue.x-k8s.io/standalone":"yes"}},"spec":{"parallelism":-1,"completions":0}}`))
	f.Add([]byte(`{"spec":{"parallelism":2147483647,"completions":2147483647,"template":{"spec":{"containers":[{"name":"c","resources":{"requests":{"memory":"4Ei"}}}]}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var job batchv1.Job
		if json.Unmarshal(data, &job) != nil {
			return
		}
		_ = integration.ValidateQueueingMetadata(&job)
		_ = validateJob(&job)
		_, _ = PodSets(&job)
		_ = (&Job{&job}).ReclaimablePods()
	})
}
