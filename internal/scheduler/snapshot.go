package scheduler

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/quota"
)

// Snapshot is what a cycle decides on. The cycle owns it: admissions are
// charged into its quota tree as they are decided.
type Snapshot struct {
	ClusterQueues map[string]*ClusterQueue
	// LocalQueues by namespace/name.
	LocalQueues map[string]*LocalQueue
	Flavors     map[string]*kueue.ResourceFlavor
	// NamespaceLabels of every namespace.
	NamespaceLabels map[string]labels.Set
	// Admitted are, by ClusterQueue, the workloads holding quota that a
	// pending one may preempt, and Evicting what the ones already told to
	// stop still hold; both are filled only when some queue preempts.
	Admitted map[string][]*Candidate
	Evicting map[string]quota.Amounts
	// FairSharing, when set, orders borrowing admissions by share and lets
	// a queue below its fair share preempt borrowers above theirs.
	FairSharing *FairSharing
}

// FairSharing is the manager's fair-sharing configuration.
type FairSharing struct {
	// Strategies allow a fair-sharing preemption when any of them holds.
	Strategies []FairStrategy
}

// FairStrategy compares the preemptor's queue and a victim's queue.
type FairStrategy string

const (
	// LessThanOrEqualToFinalShare: the preemptor's share after admission is
	// at most the victim queue's share after the eviction.
	LessThanOrEqualToFinalShare FairStrategy = "LessThanOrEqualToFinalShare"
	// LessThanInitialShare: the preemptor's share after admission is below
	// the victim queue's share before the eviction.
	LessThanInitialShare FairStrategy = "LessThanInitialShare"
)

// ClusterQueue is a ClusterQueue as admission sees it.
type ClusterQueue struct {
	Name string
	// Node is the queue's node of the quota tree.
	Node          *quota.Node
	Strategy      kueue.QueueingStrategy
	WhenCanBorrow kueue.FlavorFungibilityPolicy
	// WhenCanPreempt MayStopSearch preempts in the first flavor where
	// preemption makes room rather than trying the next; PreferPreemption
	// (PreemptionOverBorrowing) preempts in an earlier flavor rather than
	// borrow in a later one.
	WhenCanPreempt   kueue.FlavorFungibilityPolicy
	PreferPreemption bool
	Groups           []ResourceGroup
	// NamespaceSelector selects the namespaces it serves; nil selects none.
	NamespaceSelector labels.Selector
	// Active is false when the queue can't admit; InactiveMessage says why.
	Active          bool
	InactiveMessage string
	// WithinClusterQueue, ReclaimWithinCohort and BorrowWithinCohort are
	// spec.preemption's (BorrowWithinCohort nil when its policy is Never).
	WithinClusterQueue  kueue.PreemptionPolicy
	ReclaimWithinCohort kueue.PreemptionPolicy
	BorrowWithinCohort  *kueue.BorrowWithinCohort
}

// ResourceGroup is a set of resources served by the same ordered flavors.
type ResourceGroup struct {
	Resources []corev1.ResourceName
	Flavors   []string
}

// LocalQueue is a namespace's entry point.
type LocalQueue struct {
	ClusterQueue string
	// Stopped is set when its stopPolicy holds admission.
	Stopped bool
}

// covers tells which group of the queue covers a resource.
func (cq *ClusterQueue) groupOf(name corev1.ResourceName) int {
	for i, g := range cq.Groups {
		if slices.Contains(g.Resources, name) {
			return i
		}
	}
	return -1
}

// coversPods tells whether the queue accounts the pods resource.
func (cq *ClusterQueue) coversPods() bool {
	return cq.groupOf(corev1.ResourcePods) >= 0
}
