package scheduler

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/quota"
	"github.com/sluicehq/sluice/internal/workload"
)

// assignment is a flavor for every requested resource of every podSet.
type assignment struct {
	podSets []podSetAssignment
	// usage is what the workload would charge to its ClusterQueue.
	usage quota.Amounts
	// borrows is true when the queue would use more than its own quota.
	borrows bool
	// passedOver holds, for each resource group where an earlier flavor
	// lacked room only for now, the chosen flavor and those after it:
	// without them, preemption would look in the earlier flavors.
	passedOver map[string]bool
}

type podSetAssignment struct {
	name    kueue.PodSetReference
	count   int32
	flavors map[corev1.ResourceName]string
	total   workload.Requests
}

// failure explains why no assignment exists, with the Workload condition
// reason it maps to.
type failure struct {
	reason  string
	message string
}

// flavorOutcome is how one flavor fared for one resource group of a podSet.
type flavorOutcome int

const (
	ineligible flavorOutcome = iota
	neverFits                // beyond what the queue could ever get
	noRoomNow                // would fit once quota frees up
	fitsByBorrowing
	fitsInQuota
)

// assign chooses flavors for a workload in a ClusterQueue against the
// current usage of the snapshot. Without explain, a failure carries its
// reason but no message: building messages with numbers is most of the cost
// of a failure, and a caller that decides again later needs none.
func assign(cq *ClusterQueue, flavors map[string]*kueue.ResourceFlavor, info *workload.Info, explain bool) (*assignment, *failure) {
	return assignCounts(cq, flavors, info, fullCounts(info), explain)
}

// assignCounts is assign with the number of pods of each podSet given.
func assignCounts(cq *ClusterQueue, flavors map[string]*kueue.ResourceFlavor, info *workload.Info, counts []int32, explain bool) (*assignment, *failure) {
	a := &assignment{usage: quota.Amounts{}}
	for i := range info.PodSets {
		ps := &info.PodSets[i]
		count := counts[i]
		total := ps.PerPod.Scaled(count)
		if cq.coversPods() {
			total[corev1.ResourcePods] = int64(count)
		}
		psa := podSetAssignment{name: ps.Name, count: count, flavors: make(map[corev1.ResourceName]string, len(total)), total: total}
		byGroup := make([][]corev1.ResourceName, len(cq.Groups))
		for _, name := range sortedResources(total) {
			if total[name] == 0 {
				continue
			}
			g := cq.groupOf(name)
			if g < 0 {
				return nil, &failure{kueue.ReasonNoMatchingFlavor, fmt.Sprintf(
					"couldn't assign flavors to podSet %s: resource %s is not covered by ClusterQueue %s", ps.Name, name, cq.Name)}
			}
			byGroup[g] = append(byGroup[g], name)
		}
		for _, resources := range byGroup {
			if len(resources) == 0 {
				continue
			}
			flavor, borrows, skipped, f := chooseFlavor(cq, flavors, ps, resources, total, a.usage, explain)
			if f != nil {
				return nil, f
			}
			a.borrows = a.borrows || borrows
			if skipped {
				a.passOver(cq.Groups[cq.groupOf(resources[0])].Flavors, flavor)
			}
			for _, name := range resources {
				psa.flavors[name] = flavor
				fr := quota.FlavorResource{Flavor: flavor, Resource: name}
				a.usage[fr] = quota.AddSat(a.usage[fr], total[name])
			}
		}
		a.podSets = append(a.podSets, psa)
	}
	return a, nil
}

// passOver records chosen and the flavors after it in a group's order.
func (a *assignment) passOver(order []string, chosen string) {
	if a.passedOver == nil {
		a.passedOver = map[string]bool{}
	}
	for _, name := range order[slices.Index(order, chosen):] {
		a.passedOver[name] = true
	}
}

// chooseFlavor tries the group's flavors in order. MayStopSearch takes the
// first that fits, even by borrowing; TryNextFlavor prefers a later flavor
// that fits within the queue's own quota. skipped tells that an earlier
// flavor than the chosen one lacked room only for now.
func chooseFlavor(cq *ClusterQueue, flavors map[string]*kueue.ResourceFlavor, ps *workload.PodSet,
	resources []corev1.ResourceName, total workload.Requests, alreadyAssigned quota.Amounts, explain bool) (chosen string, borrows, skipped bool, f *failure) {
	group := cq.Groups[cq.groupOf(resources[0])]
	var reasons []string
	best := ineligible
	borrowingCandidate, skippedBeforeBorrowing := "", false
	for _, name := range group.Flavors {
		flavor, ok := flavors[name]
		if !ok {
			reasons = append(reasons, fmt.Sprintf("flavor %s not found", name))
			continue
		}
		if why := ineligibility(flavor, ps); why != "" {
			reasons = append(reasons, fmt.Sprintf("flavor %s: %s", name, why))
			continue
		}
		outcome, why := fitIn(cq, name, resources, total, alreadyAssigned, explain)
		best = max(best, outcome)
		switch outcome {
		case fitsInQuota:
			return name, false, skipped, nil
		case fitsByBorrowing:
			if cq.WhenCanBorrow != kueue.TryNextFlavor {
				return name, true, skipped, nil
			}
			if borrowingCandidate == "" {
				borrowingCandidate, skippedBeforeBorrowing = name, skipped
			}
		case noRoomNow:
			skipped = true
			reasons = append(reasons, why)
		default:
			reasons = append(reasons, why)
		}
	}
	if borrowingCandidate != "" {
		return borrowingCandidate, true, skippedBeforeBorrowing, nil
	}
	reason := kueue.ReasonWaitingForQuota
	switch best {
	case ineligible:
		reason = kueue.ReasonNoMatchingFlavor
	case neverFits:
		reason = kueue.ReasonExceedsMaxQuota
	}
	return "", false, false, &failure{reason, fmt.Sprintf("couldn't assign flavors to podSet %s: %s", ps.Name, strings.Join(reasons, "; "))}
}

// fitIn checks every resource of a group in one flavor.
func fitIn(cq *ClusterQueue, flavor string, resources []corev1.ResourceName, total workload.Requests, alreadyAssigned quota.Amounts, explain bool) (flavorOutcome, string) {
	outcome := fitsInQuota
	var why []string
	for _, name := range resources {
		fr := quota.FlavorResource{Flavor: flavor, Resource: name}
		need := quota.AddSat(total[name], alreadyAssigned[fr])
		node := cq.Node
		available := node.Available(fr)
		switch {
		case need > node.Potential(fr):
			outcome = min(outcome, neverFits)
			if !explain {
				continue
			}
			why = append(why, fmt.Sprintf("requests %s of %s in flavor %s exceed the most ClusterQueue %s can get (%s)",
				quota.Format(name, need), name, flavor, cq.Name, quota.Format(name, node.Potential(fr))))
		case need > available:
			outcome = min(outcome, noRoomNow)
			if !explain {
				continue
			}
			nominal, used := node.Nominal(fr), node.Usage(fr)
			lend := max(0, available-max(0, nominal-used))
			why = append(why, fmt.Sprintf("insufficient quota for %s in flavor %s: requests %s, available %s of nominal %s, %s in use, cohort can lend %s",
				name, flavor, quota.Format(name, need), quota.Format(name, available), quota.Format(name, nominal),
				quota.Format(name, used), quota.Format(name, lend)))
		case quota.AddSat(node.Usage(fr), need) > node.SubtreeQuota(fr):
			outcome = min(outcome, fitsByBorrowing)
		}
	}
	return outcome, strings.Join(why, "; ")
}

// admission renders an assignment as the Workload's status.admission.
func (a *assignment) admission(cq string) *kueue.Admission {
	adm := &kueue.Admission{ClusterQueue: kueue.ClusterQueueReference(cq)}
	for _, psa := range a.podSets {
		out := kueue.PodSetAssignment{
			Name:          psa.name,
			Flavors:       map[corev1.ResourceName]kueue.ResourceFlavorReference{},
			ResourceUsage: corev1.ResourceList{},
			Count:         ptr.To(psa.count),
		}
		for name, flavor := range psa.flavors {
			out.Flavors[name] = kueue.ResourceFlavorReference(flavor)
		}
		for name, v := range psa.total {
			out.ResourceUsage[name] = quota.ToQuantity(name, v)
		}
		adm.PodSetAssignments = append(adm.PodSetAssignments, out)
	}
	return adm
}

func sortedResources(r workload.Requests) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(r))
	for name := range r {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
