package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ResourceFlavorReference is the name of a ResourceFlavor.
// +kubebuilder:validation:MaxLength=253
// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
type ResourceFlavorReference string

// CohortReference is the name of a Cohort, explicit (an object) or implicit.
// +kubebuilder:validation:MaxLength=253
type CohortReference string

// ClusterQueueReference is the name of a ClusterQueue.
// +kubebuilder:validation:MaxLength=253
type ClusterQueueReference string

// LocalQueueName is the name of a LocalQueue.
// +kubebuilder:validation:MaxLength=253
type LocalQueueName string

// ResourceGroup is a set of resources that share the same list of flavors: a
// workload gets all resources of a group from one flavor.
//
// +kubebuilder:validation:XValidation:rule="self.flavors.all(f, size(f.resources) == size(self.coveredResources) && f.resources.all(r, r.name in self.coveredResources))",message="flavors must list exactly the coveredResources",fieldPath=".flavors"
type ResourceGroup struct {
	// coveredResources lists the resources whose quota this group defines.
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:Type=string
	// +kubebuilder:validation:items:MaxLength=253
	CoveredResources []corev1.ResourceName `json:"coveredResources"`

	// flavors lists the flavors of this group in the order they are tried.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Flavors []FlavorQuotas `json:"flavors"`
}

// FlavorQuotas is the quota of one flavor for the covered resources of a group.
type FlavorQuotas struct {
	// name of the ResourceFlavor.
	// +required
	Name ResourceFlavorReference `json:"name"`

	// resources lists the quota of every covered resource in this flavor.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Resources []ResourceQuota `json:"resources"`
}

// ResourceQuota is the quota of one resource in one flavor.
type ResourceQuota struct {
	// name of the resource, e.g. cpu, memory, nvidia.com/gpu, pods.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=253
	Name corev1.ResourceName `json:"name"`

	// nominalQuota is what this node of the quota tree owns (at least 0).
	// +required
	NominalQuota resource.Quantity `json:"nominalQuota"`

	// borrowingLimit caps what can be borrowed from the cohort above the
	// nominal quota (at least 0). Unset means unlimited. Only with a cohort.
	// +optional
	BorrowingLimit *resource.Quantity `json:"borrowingLimit,omitempty"`

	// lendingLimit caps what of the unused nominal quota the cohort may lend to
	// others (0 to nominalQuota). Unset means all unused nominal quota. Only with
	// a cohort.
	// +optional
	LendingLimit *resource.Quantity `json:"lendingLimit,omitempty"`
}

// FairSharing holds the weight of a queue or cohort when it competes for
// unused capacity of its cohort.
type FairSharing struct {
	// weight of this node's share; 0 means it only gets what nobody else wants.
	// +kubebuilder:default=1
	// +optional
	Weight *resource.Quantity `json:"weight,omitempty"`
}

// FairSharingStatus reports the share of a ClusterQueue or Cohort.
type FairSharingStatus struct {
	// weightedShare is the dominant share of the node divided by its weight,
	// scaled to an integer.
	WeightedShare int64 `json:"weightedShare"`
}

// StopPolicy tells a queue whether it keeps admitting.
// +kubebuilder:validation:Enum=None;Hold;HoldAndDrain
type StopPolicy string

const (
	// StopPolicyNone admits as usual.
	StopPolicyNone StopPolicy = "None"
	// StopPolicyHold admits nothing new and keeps admitted workloads.
	StopPolicyHold StopPolicy = "Hold"
	// StopPolicyHoldAndDrain admits nothing new and evicts admitted workloads.
	StopPolicyHoldAndDrain StopPolicy = "HoldAndDrain"
)
