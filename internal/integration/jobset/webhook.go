package jobset

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/sluicehq/sluice/internal/integration"
)

// +kubebuilder:webhook:path=/mutate-jobset-x-k8s-io-v1alpha2-jobset,mutating=true,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=jobset.x-k8s.io,resources=jobsets,verbs=create;update,versions=v1alpha2,name=mjobset.kueue.x-k8s.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-jobset-x-k8s-io-v1alpha2-jobset,mutating=false,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=jobset.x-k8s.io,resources=jobsets,verbs=create;update,versions=v1alpha2,name=vjobset.kueue.x-k8s.io,admissionReviewVersions=v1

// newWebhook is the JobSet webhook: the shared plumbing, with the JobSet's
// pod-set rules checked on every JobSet sluice queues, and each replicated
// Job's Job and pod templates checked for standalone (its Workload counts
// them all).
func newWebhook(deps integration.Deps) *integration.JobWebhook[*jobsetapi.JobSet] {
	return &integration.JobWebhook[*jobsetapi.JobSet]{
		Enabled: deps.Enabled, Kind: Kind, Policy: deps.Policy, Reader: deps.Reader, APIReader: deps.APIReader,
		Templates: templates,
		QueuedRules: func(js *jobsetapi.JobSet) field.ErrorList {
			return validatePodSets(js)
		},
		DefaultUpdate: suspendIfGrown,
	}
}

// suspendIfGrown suspends a running JobSet that sluice started when a
// replicated Job asks for more than it ran with: more pods, a replicated
// Job that is new, or other requests. JobSet's own webhook refuses such
// changes, but it need not be installed. Suspended, it stops, and its
// Workload queues again with the new shape.
func suspendIfGrown(old, js *jobsetapi.JobSet) {
	integration.SuspendIfGrown(newJobSet(old), newJobSet(js))
}

// templates are each replicated Job's Job template and pod template.
func templates(js *jobsetapi.JobSet) []integration.Template {
	var out []integration.Template
	for i := range js.Spec.ReplicatedJobs {
		rj := &js.Spec.ReplicatedJobs[i]
		path := field.NewPath("spec", "replicatedJobs").Index(i).Child("template")
		out = append(out,
			integration.Template{Meta: &rj.Template.ObjectMeta, Path: path},
			integration.Template{Meta: &rj.Template.Spec.Template.ObjectMeta, Pod: &rj.Template.Spec.Template.Spec, Path: path.Child("spec", "template")})
	}
	return out
}
