package webhook

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// FuzzValidators decodes arbitrary JSON into every kind the webhooks
// validate and runs its validators: whatever the API server lets through
// its schema (and more), a validator answers with errors, never a panic.
// An update is validated against the previous object decoded from the
// same bytes with its status dropped, so both sides of a transition are
// fuzzed.
func FuzzValidators(f *testing.F) {
	f.Add([]byte(`{"spec":{"cohortName":"c","resourceGroups":[{"coveredResources":["cpu"],"flavors":[{"name":"f","resources":[{"name":"cpu","nominalQuota":"4Ei","borrowingLimit":"-1","lendingLimit":"9e18"}]}]}]}}`))
	f.Add([]byte(`{"spec":{"queueName":"q","podSets":[{"name":"main","count":3,"template":{"spec":{"containers":[{"name":"c","resources":{"requests":{"memory":"4Ei","pods":"1"}}}]}}}]},"status":{"admission":{"clusterQueue":"cq","podSetAssignments":[{"name":"main","count":9}]},"reclaimablePods":[{"name":"x","count":1}],"conditions":[{"type":"QuotaReserved","status":"True"}]}}`))
	f.Add([]byte(`{"spec":{"nodeLabels":{"":"x"},"nodeTaints":[{"key":"","effect":"Bad"}],"tolerations":[{"operator":"Exists","value":"v"}],"topologyName":"t"}}`))
	f.Add([]byte(`{"spec":{"clusterQueue":"","stopPolicy":"Hold","fairSharing":{"weight":"-1"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var cq kueue.ClusterQueue
		if json.Unmarshal(data, &cq) == nil {
			_ = ValidateClusterQueue(&cq)
		}
		var co kueue.Cohort
		if json.Unmarshal(data, &co) == nil {
			_ = ValidateCohort(&co)
		}
		var lq kueue.LocalQueue
		if json.Unmarshal(data, &lq) == nil {
			_ = ValidateLocalQueue(&lq)
		}
		var rf kueue.ResourceFlavor
		if json.Unmarshal(data, &rf) == nil {
			_ = ValidateResourceFlavor(&rf)
		}
		var wl kueue.Workload
		if json.Unmarshal(data, &wl) == nil {
			_ = ValidateWorkload(&wl)
			old := wl.DeepCopy()
			old.Status = kueue.WorkloadStatus{}
			_ = ValidateWorkloadUpdate(old, &wl)
			_ = ValidateWorkloadUpdate(&wl, old)
		}
		var spec corev1.PodSpec
		if json.Unmarshal(data, &spec) == nil {
			_ = ValidatePodSpecAmounts(&spec, field.NewPath("spec"))
		}
	})
}
