package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// LocalQueueStatus of v1beta1: flavorUsage is v1beta2's flavorsUsage.
type LocalQueueStatus struct {
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
	// +optional
	PendingWorkloads int32 `json:"pendingWorkloads"`
	// +optional
	ReservingWorkloads int32 `json:"reservingWorkloads"`
	// +optional
	AdmittedWorkloads int32 `json:"admittedWorkloads"`
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	FlavorsReservation []v1beta2.LocalQueueFlavorUsage `json:"flavorsReservation,omitempty"`
	// flavorUsage is v1beta2's flavorsUsage.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	FlavorUsage []v1beta2.LocalQueueFlavorUsage `json:"flavorUsage,omitempty"`
	// +optional
	FairSharing *v1beta2.LocalQueueFairSharingStatus `json:"fairSharing,omitempty"`
}

// LocalQueue of v1beta1.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName={lq,queue,queues}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="ClusterQueue",JSONPath=".spec.clusterQueue",type=string,description="Backing ClusterQueue"
// +kubebuilder:printcolumn:name="Pending Workloads",JSONPath=".status.pendingWorkloads",type=integer,description="Number of pending workloads"
// +kubebuilder:printcolumn:name="Admitted Workloads",JSONPath=".status.admittedWorkloads",type=integer,description="Number of admitted workloads that haven't finished yet"
type LocalQueue struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec v1beta2.LocalQueueSpec `json:"spec,omitempty"`
	// +optional
	Status LocalQueueStatus `json:"status,omitempty"`
}

// LocalQueueList is a list of LocalQueues.
//
// +kubebuilder:object:root=true
type LocalQueueList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []LocalQueue `json:"items"`
}
