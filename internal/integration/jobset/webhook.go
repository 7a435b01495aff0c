package jobset

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
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
		Enabled: deps.Enabled, Kind: Kind, Policy: deps.Policy, Reader: deps.Reader, ClassReader: deps.APIReader,
		Templates: templates,
		QueuedRules: func(js *jobsetapi.JobSet) field.ErrorList {
			return validatePodSets(js)
		},
		DefaultUpdate: suspendIfGrown,
	}
}

// suspendIfGrown suspends a running JobSet that sluice started (it carries
// the originals sluice restores) when a replicated Job asks for more than
// it ran with: more pods, a replicated Job that is new, or other requests.
// The JobSet controller would otherwise create pods beyond the admission
// before the reconciler could stop it (JobSet's own webhook refuses such
// changes, but it need not be installed). Suspended, it stops, and its
// Workload queues again with the new shape.
func suspendIfGrown(old, js *jobsetapi.JobSet) {
	if _, started := js.Annotations[integration.OriginalPodSetsAnnotation]; !started || ptr.Deref(js.Spec.Suspend, false) {
		return
	}
	before := map[string]*jobsetapi.ReplicatedJob{}
	for i := range old.Spec.ReplicatedJobs {
		before[old.Spec.ReplicatedJobs[i].Name] = &old.Spec.ReplicatedJobs[i]
	}
	for i := range js.Spec.ReplicatedJobs {
		rj := &js.Spec.ReplicatedJobs[i]
		was, ok := before[rj.Name]
		if !ok || int64(replicas(rj))*int64(podsPerJob(rj)) > int64(replicas(was))*int64(podsPerJob(was)) ||
			!sameRequests(&was.Template.Spec.Template.Spec, &rj.Template.Spec.Template.Spec) {
			js.Spec.Suspend = ptr.To(true)
			return
		}
	}
}

// sameRequests tells whether two pod specs have the same containers with
// the same resources.
func sameRequests(a, b *corev1.PodSpec) bool {
	for _, pair := range [][2][]corev1.Container{{a.Containers, b.Containers}, {a.InitContainers, b.InitContainers}} {
		if len(pair[0]) != len(pair[1]) {
			return false
		}
		for i := range pair[0] {
			if !equality.Semantic.DeepEqual(pair[0][i].Resources, pair[1][i].Resources) {
				return false
			}
		}
	}
	return equality.Semantic.DeepEqual(a.Overhead, b.Overhead) && equality.Semantic.DeepEqual(a.Resources, b.Resources)
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
