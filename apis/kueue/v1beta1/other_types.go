package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// AdmissionCheckSpec of v1beta1, with retryDelayMinutes (deprecated in
// Kueue, gone in v1beta2; dropped on conversion).
type AdmissionCheckSpec struct {
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="controllerName is immutable"
	ControllerName string `json:"controllerName"`
	// +kubebuilder:default=15
	// +optional
	RetryDelayMinutes *int64 `json:"retryDelayMinutes,omitempty"`
	// +optional
	Parameters *v1beta2.AdmissionCheckParametersReference `json:"parameters,omitempty"`
}

// AdmissionCheck of v1beta1.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName={ac}
// +kubebuilder:subresource:status
type AdmissionCheck struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec AdmissionCheckSpec `json:"spec,omitempty"`
	// +optional
	Status v1beta2.AdmissionCheckStatus `json:"status,omitempty"`
}

// AdmissionCheckList is a list of AdmissionChecks.
//
// +kubebuilder:object:root=true
type AdmissionCheckList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AdmissionCheck `json:"items"`
}

// MultiKueueClusterSpec of v1beta1: kubeConfig and clusterProfileRef
// directly in spec (v1beta2 puts them in clusterSource).
type MultiKueueClusterSpec struct {
	// +optional
	KubeConfig *v1beta2.KubeConfig `json:"kubeConfig,omitempty"`
	// +optional
	ClusterProfileRef *v1beta2.ClusterProfileReference `json:"clusterProfileRef,omitempty"`
}

// MultiKueueCluster of v1beta1.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName={mkc}
// +kubebuilder:subresource:status
type MultiKueueCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec MultiKueueClusterSpec `json:"spec,omitempty"`
	// +optional
	Status v1beta2.MultiKueueClusterStatus `json:"status,omitempty"`
}

// MultiKueueClusterList is a list of MultiKueueClusters.
//
// +kubebuilder:object:root=true
type MultiKueueClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MultiKueueCluster `json:"items"`
}
