package integration

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/workload"
)

// Started tells whether sluice started the job and it still runs: it
// carries the originals sluice restores, and it is not suspended.
func Started(job Job) bool {
	_, started := job.Object().GetAnnotations()[OriginalPodSetsAnnotation]
	return started && !job.IsSuspended()
}

// Grew tells whether a job's pod sets ask for more than before: a pod set
// that is new, that counts more pods, or whose pods request other
// resources. A running job that grew must be suspended in the update that
// grows it: its controller would otherwise create pods beyond the
// admission before the reconciler could stop it.
func Grew(before, after []kueue.PodSet) bool {
	return exceeds(after, before, sameRequests)
}

// exceeds tells whether pod sets ask for more than base, pod set by pod
// set of the same name: one base lacks, more pods, or pods whose requests
// same does not find equal to base's.
func exceeds(podSets, base []kueue.PodSet, same func(a, b *corev1.PodSpec) bool) bool {
	limit := map[kueue.PodSetReference]*kueue.PodSet{}
	for i := range base {
		limit[base[i].Name] = &base[i]
	}
	for i := range podSets {
		l, ok := limit[podSets[i].Name]
		if !ok || podSets[i].Count > l.Count || !same(&l.Template.Spec, &podSets[i].Template.Spec) {
			return true
		}
	}
	return false
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

// SuspendIfGrown suspends a running job sluice started whose pod sets grew
// (Grew); pod sets that can't be read count as grown.
func SuspendIfGrown(old, updated Job) {
	if !Started(updated) {
		return
	}
	before, err := old.PodSets()
	if err != nil {
		return
	}
	after, err := updated.PodSets()
	if err != nil || Grew(before, after) {
		updated.Suspend()
	}
}

// SamePodRequests tells whether two pod specs ask for the same resources
// per pod (their effective requests: containers, init containers and
// overhead), whatever their containers' names and order.
func SamePodRequests(a, b *corev1.PodSpec) bool {
	return equality.Semantic.DeepEqual(workload.PodRequests(a), workload.PodRequests(b))
}

// FitsWithin tells whether pod sets ask for no more than allowed, pod set
// by pod set of the same name: none that allowed lacks, no more pods, the
// same requests per pod. A controller's child object built from its
// parent's templates fits within the parent's pod sets.
func FitsWithin(podSets, allowed []kueue.PodSet) bool {
	return !exceeds(podSets, allowed, SamePodRequests)
}
