package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// The kinds whose v1beta1 shape is v1beta2's: served under v1beta1 with
// v1beta2's types.

// ResourceFlavor of v1beta1.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName={rf,flavor,flavors}
type ResourceFlavor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec v1beta2.ResourceFlavorSpec `json:"spec,omitempty"`
}

// ResourceFlavorList is a list of ResourceFlavors.
//
// +kubebuilder:object:root=true
type ResourceFlavorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourceFlavor `json:"items"`
}

// Cohort of v1beta1.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName={co}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Parent",JSONPath=".spec.parentName",type=string,description="Parent Cohort"
type Cohort struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec v1beta2.CohortSpec `json:"spec,omitempty"`
	// +optional
	Status v1beta2.CohortStatus `json:"status,omitempty"`
}

// CohortList is a list of Cohorts.
//
// +kubebuilder:object:root=true
type CohortList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Cohort `json:"items"`
}

// WorkloadPriorityClass of v1beta1.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName={wpc}
// +kubebuilder:printcolumn:name="Value",JSONPath=".value",type=integer,description="Value of the priority"
type WorkloadPriorityClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// value of the priority; higher admits first.
	// +required
	Value int32 `json:"value"`

	// description of when to use this class.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	Description string `json:"description,omitempty"`
}

// WorkloadPriorityClassList is a list of WorkloadPriorityClasses.
//
// +kubebuilder:object:root=true
type WorkloadPriorityClassList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WorkloadPriorityClass `json:"items"`
}

// Topology of v1beta1.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName={topo}
type Topology struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec v1beta2.TopologySpec `json:"spec"`
}

// TopologyList is a list of Topologies.
//
// +kubebuilder:object:root=true
type TopologyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Topology `json:"items"`
}

// ProvisioningRequestConfig of v1beta1.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName={prc}
type ProvisioningRequestConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec v1beta2.ProvisioningRequestConfigSpec `json:"spec"`
}

// ProvisioningRequestConfigList is a list of ProvisioningRequestConfigs.
//
// +kubebuilder:object:root=true
type ProvisioningRequestConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ProvisioningRequestConfig `json:"items"`
}

// MultiKueueConfig of v1beta1.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName={mkconf}
type MultiKueueConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec v1beta2.MultiKueueConfigSpec `json:"spec,omitempty"`
}

// MultiKueueConfigList is a list of MultiKueueConfigs.
//
// +kubebuilder:object:root=true
type MultiKueueConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MultiKueueConfig `json:"items"`
}
