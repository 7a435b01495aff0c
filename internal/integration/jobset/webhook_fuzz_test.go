package jobset

import (
	"encoding/json"
	"testing"

	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/sluicehq/sluice/internal/integration"
)

// FuzzValidateJobSet: the JobSet's pod sets, its queueing metadata and the
// grow check answer any decodable JobSet with errors, never a panic.
func FuzzValidateJobSet(f *testing.F) {
	f.Add([]byte(`{"metadata":{"labels":{"kueue.x-k8s.io/queue-name":"Not_A_Name"}},"spec":{"replicatedJobs":[{"name":"a","replicas":2147483647,"template":{"spec":{"parallelism":2147483647}}}]}}`))
	f.Add([]byte(`{"spec":{"replicatedJobs":[{"name":"","replicas":-5,"template":{"spec":{"parallelism":-1,"completions":0}}}]},"status":{"replicatedJobsStatus":[{"name":"","succeeded":-3,"ready":2147483647}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var js jobsetapi.JobSet
		if json.Unmarshal(data, &js) != nil {
			return
		}
		_ = integration.ValidateQueueingMetadata(&js)
		_, _ = PodSets(&js)
		w := newJobSet(&js)
		_ = w.ReclaimablePods()
		_ = w.ReadyPods()
		_ = templates(&js)
		suspendIfGrown(js.DeepCopy(), &js)
	})
}
