package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CohortSpec places a Cohort in the tree and gives it a pool of its own.
//
// +kubebuilder:validation:XValidation:rule="(has(self.parentName) && size(self.parentName) > 0) || !has(self.resourceGroups) || self.resourceGroups.all(rg, rg.flavors.all(f, f.resources.all(r, !has(r.borrowingLimit) && !has(r.lendingLimit))))",message="borrowingLimit and lendingLimit require a parentName",fieldPath=".resourceGroups"
type CohortSpec struct {
	// parentName is the parent Cohort; unset makes this Cohort a root. A
	// missing parent acts as an implicit cohort with no quota.
	// +optional
	ParentName CohortReference `json:"parentName,omitempty"`

	// resourceGroups: nominal quota shared by the subtree of this Cohort.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +optional
	ResourceGroups []ResourceGroup `json:"resourceGroups,omitempty"`

	// fairSharing holds the weight of this Cohort in its parent.
	// +optional
	FairSharing *FairSharing `json:"fairSharing,omitempty"`
}

// CohortStatus reports the share of a Cohort.
type CohortStatus struct {
	// fairSharing reports the share of this Cohort.
	// +optional
	FairSharing *FairSharingStatus `json:"fairSharing,omitempty"`
}

// Cohort groups ClusterQueues (and Cohorts) that lend each other unused quota.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:scope=Cluster,shortName={co}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Parent",JSONPath=".spec.parentName",type=string,description="Parent Cohort"
type Cohort struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec CohortSpec `json:"spec,omitempty"`
	// +optional
	Status CohortStatus `json:"status,omitempty"`
}

// CohortList is a list of Cohorts.
//
// +kubebuilder:object:root=true
type CohortList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Cohort `json:"items"`
}

func init() {
	register(&Cohort{}, &CohortList{})
}
