package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WorkloadPriorityClass names a priority for workloads, independent of the
// pods' PriorityClass. Changing value does not change existing Workloads.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
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

func init() {
	register(&WorkloadPriorityClass{}, &WorkloadPriorityClassList{})
}
