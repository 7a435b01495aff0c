package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// ClusterQueueSpec of v1beta1: cohort (v1beta2's cohortName), checks as a
// plain list of names (v1beta2 has only admissionChecksStrategy), and
// flavor fungibility with v1beta1's Borrow and Preempt.
//
// +kubebuilder:validation:XValidation:rule="(has(self.cohort) && size(self.cohort) > 0) || !has(self.resourceGroups) || self.resourceGroups.all(rg, rg.flavors.all(f, f.resources.all(r, !has(r.borrowingLimit) && !has(r.lendingLimit))))",message="borrowingLimit and lendingLimit require a cohort",fieldPath=".resourceGroups"
// +kubebuilder:validation:XValidation:rule="!has(self.admissionChecks) || !has(self.admissionChecksStrategy)",message="either admissionChecks or admissionChecksStrategy can be set, not both"
type ClusterQueueSpec struct {
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +optional
	ResourceGroups []v1beta2.ResourceGroup `json:"resourceGroups,omitempty"`

	// cohort is v1beta2's cohortName.
	// +optional
	Cohort v1beta2.CohortReference `json:"cohort,omitempty"`

	// +kubebuilder:default=BestEffortFIFO
	// +optional
	QueueingStrategy v1beta2.QueueingStrategy `json:"queueingStrategy,omitempty"`

	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`

	// +kubebuilder:default={}
	// +optional
	FlavorFungibility *FlavorFungibility `json:"flavorFungibility,omitempty"`

	// +kubebuilder:default={}
	// +optional
	Preemption *v1beta2.ClusterQueuePreemption `json:"preemption,omitempty"`

	// admissionChecks: names of the checks every workload must pass
	// (v1beta2 says this with admissionChecksStrategy).
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=316
	// +optional
	AdmissionChecks []string `json:"admissionChecks,omitempty"`

	// +optional
	AdmissionChecksStrategy *v1beta2.AdmissionChecksStrategy `json:"admissionChecksStrategy,omitempty"`

	// +kubebuilder:default=None
	// +optional
	StopPolicy *v1beta2.StopPolicy `json:"stopPolicy,omitempty"`

	// +optional
	FairSharing *v1beta2.FairSharing `json:"fairSharing,omitempty"`

	// +optional
	AdmissionScope *v1beta2.AdmissionScope `json:"admissionScope,omitempty"`
}

// FlavorFungibilityPolicy of v1beta1: Borrow and Preempt are v1beta2's
// MayStopSearch.
// +kubebuilder:validation:Enum=MayStopSearch;TryNextFlavor;Borrow;Preempt
type FlavorFungibilityPolicy string

// v1beta1's names for MayStopSearch.
const (
	Borrow  FlavorFungibilityPolicy = "Borrow"
	Preempt FlavorFungibilityPolicy = "Preempt"
)

// FlavorFungibility of v1beta1.
//
// +kubebuilder:validation:XValidation:rule="!has(self.preference) || (self.whenCanBorrow == 'TryNextFlavor' && self.whenCanPreempt == 'TryNextFlavor')",message="preference requires whenCanBorrow and whenCanPreempt to be TryNextFlavor",fieldPath=".preference"
type FlavorFungibility struct {
	// +kubebuilder:default=MayStopSearch
	// +optional
	WhenCanBorrow FlavorFungibilityPolicy `json:"whenCanBorrow,omitempty"`
	// +kubebuilder:default=TryNextFlavor
	// +optional
	WhenCanPreempt FlavorFungibilityPolicy `json:"whenCanPreempt,omitempty"`
	// +optional
	Preference *v1beta2.FlavorFungibilityPreference `json:"preference,omitempty"`
}

// ClusterQueue of v1beta1.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName={cq}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cohort",JSONPath=".spec.cohort",type=string,description="Cohort that this ClusterQueue belongs to"
// +kubebuilder:printcolumn:name="Strategy",JSONPath=".spec.queueingStrategy",type=string,description="The queueing strategy used to prioritize workloads",priority=1
// +kubebuilder:printcolumn:name="Pending Workloads",JSONPath=".status.pendingWorkloads",type=integer,description="Number of pending workloads"
// +kubebuilder:printcolumn:name="Admitted Workloads",JSONPath=".status.admittedWorkloads",type=integer,description="Number of admitted workloads that haven't finished yet",priority=1
type ClusterQueue struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec ClusterQueueSpec `json:"spec,omitempty"`
	// +optional
	Status v1beta2.ClusterQueueStatus `json:"status,omitempty"`
}

// ClusterQueueList is a list of ClusterQueues.
//
// +kubebuilder:object:root=true
type ClusterQueueList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterQueue `json:"items"`
}
