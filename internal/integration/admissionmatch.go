package integration

import (
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/workload"
)

// EvictedReasonJobChanged evicts an admitted job whose pod sets grew beyond
// its admission (more pods, other requests, other pod sets): it stops and
// queues again with its new shape.
const EvictedReasonJobChanged = "JobChanged"

// beyondAdmission says how a job's pod sets exceed what its Workload was
// admitted with, or "" when they don't. A job not started yet (suspended,
// nothing injected) must still be what its Workload describes; a running
// one may have fewer pods than admitted (those are reclaimable) but never
// more, nor other requests or pod sets.
func beyondAdmission(job Job, wl *kueue.Workload) string {
	podSets, err := job.PodSets()
	if err != nil {
		return ""
	}
	if job.IsSuspended() && !hasOriginals(job.Object()) {
		if !samePodSets(wl.Spec.PodSets, podSets) {
			return "its pod sets changed after admission"
		}
		return ""
	}
	if len(podSets) != len(wl.Spec.PodSets) {
		return fmt.Sprintf("it has %d pod sets, its admission %d", len(podSets), len(wl.Spec.PodSets))
	}
	for i := range podSets {
		have, admitted := &podSets[i], &wl.Spec.PodSets[i]
		if have.Name != admitted.Name {
			return fmt.Sprintf("pod set %s is not in its admission", have.Name)
		}
		if count := admittedCount(wl, i); have.Count > count {
			return fmt.Sprintf("pod set %s has %d pods, %d admitted", have.Name, have.Count, count)
		}
		// Places given back (a lowered count) belong to other Workloads
		// by now: the pods the job still needs must fit in those it holds.
		needed := have.Count - reclaimableOf(job.ReclaimablePods(), have.Name)
		if held := admittedCount(wl, i) - reclaimableOf(wl.Status.ReclaimablePods, have.Name); needed > held {
			return fmt.Sprintf("pod set %s needs %d pods, it gave back places and holds %d", have.Name, needed, held)
		}
		if !apiequality.Semantic.DeepEqual(workload.PodRequests(&have.Template.Spec), workload.PodRequests(&admitted.Template.Spec)) {
			return fmt.Sprintf("the requests of pod set %s changed after admission", have.Name)
		}
	}
	return ""
}

// admittedCount is the number of pods admitted for the Workload's i-th pod
// set: the admission's count (partial admission), else the pod set's.
func admittedCount(wl *kueue.Workload, i int) int32 {
	name := wl.Spec.PodSets[i].Name
	if adm := wl.Status.Admission; adm != nil {
		for _, psa := range adm.PodSetAssignments {
			if psa.Name == name && psa.Count != nil {
				return *psa.Count
			}
		}
	}
	return wl.Spec.PodSets[i].Count
}

// shrunk are the pods of each pod set a running job no longer has (its
// count lowered below the admitted one): reclaimable, not a reason to stop.
func shrunk(job Job, wl *kueue.Workload) []kueue.ReclaimablePod {
	podSets, err := job.PodSets()
	if err != nil || len(podSets) != len(wl.Spec.PodSets) {
		return nil
	}
	var out []kueue.ReclaimablePod
	for i := range podSets {
		if less := admittedCount(wl, i) - podSets[i].Count; less > 0 && podSets[i].Name == wl.Spec.PodSets[i].Name {
			out = append(out, kueue.ReclaimablePod{Name: podSets[i].Name, Count: less})
		}
	}
	return out
}

// reclaimableOf is the count of a pod set among reclaimable pods.
func reclaimableOf(pods []kueue.ReclaimablePod, name kueue.PodSetReference) int32 {
	for _, rp := range pods {
		if rp.Name == name {
			return rp.Count
		}
	}
	return 0
}
