package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AdmissionCheckSpec names the controller that runs a check.
type AdmissionCheckSpec struct {
	// controllerName of the controller that runs this check.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="controllerName is immutable"
	ControllerName string `json:"controllerName"`

	// parameters of the check: an object the controller reads.
	// +optional
	Parameters *AdmissionCheckParametersReference `json:"parameters,omitempty"`
}

// AdmissionCheckParametersReference points at the parameters of a check.
type AdmissionCheckParametersReference struct {
	// apiGroup of the parameters object.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
	APIGroup string `json:"apiGroup"`

	// kind of the parameters object.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern="^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$"
	Kind string `json:"kind"`

	// name of the parameters object.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
	Name string `json:"name"`
}

// AdmissionCheckStatus reports whether the check can be used.
type AdmissionCheckStatus struct {
	// conditions: Active.
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// AdmissionCheck is a gate, run by an external controller, that a workload
// must pass after it reserved quota and before it is admitted.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:scope=Cluster,shortName={ac}
// +kubebuilder:subresource:status
type AdmissionCheck struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec AdmissionCheckSpec `json:"spec,omitempty"`
	// +optional
	Status AdmissionCheckStatus `json:"status,omitempty"`
}

// AdmissionCheckList is a list of AdmissionChecks.
//
// +kubebuilder:object:root=true
type AdmissionCheckList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AdmissionCheck `json:"items"`
}

func init() {
	register(&AdmissionCheck{}, &AdmissionCheckList{})
}
