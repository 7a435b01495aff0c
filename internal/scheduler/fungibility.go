package scheduler

import kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"

// preemptsBefore tells whether flavorFungibility asks to try preemption in
// the flavors an assignment passed over for lack of room before taking it:
// always with whenCanPreempt MayStopSearch (the first flavor where
// preemption makes room ends the search), and, when both policies are
// TryNextFlavor, for an assignment that borrows if the preference is
// PreemptionOverBorrowing.
func (cq *ClusterQueue) preemptsBefore(a *assignment) bool {
	if len(a.passedOver) == 0 || !cq.Preempts() {
		return false
	}
	if cq.WhenCanPreempt == kueue.MayStopSearch {
		return true
	}
	return a.borrows && cq.PreferPreemption && cq.WhenCanBorrow == kueue.TryNextFlavor
}

// withoutFlavors is the queue with some flavors taken out of its resource
// groups: what preemption may look at when later flavors are set aside.
// The quota node is shared.
func (cq *ClusterQueue) withoutFlavors(excluded map[string]bool) *ClusterQueue {
	out := *cq
	out.Groups = make([]ResourceGroup, len(cq.Groups))
	for i, g := range cq.Groups {
		out.Groups[i].Resources = g.Resources
		for _, f := range g.Flavors {
			if !excluded[f] {
				out.Groups[i].Flavors = append(out.Groups[i].Flavors, f)
			}
		}
	}
	return &out
}
