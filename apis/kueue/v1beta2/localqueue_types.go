package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LocalQueueSpec points a namespace's queue at a ClusterQueue.
type LocalQueueSpec struct {
	// clusterQueue that admits this queue's workloads.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterQueue is immutable"
	ClusterQueue ClusterQueueReference `json:"clusterQueue"`

	// stopPolicy stops admission (Hold) and evicts admitted workloads
	// (HoldAndDrain) of this queue.
	// +kubebuilder:default=None
	// +optional
	StopPolicy *StopPolicy `json:"stopPolicy,omitempty"`

	// fairSharing holds the weight of this queue (admission fair sharing).
	// +optional
	FairSharing *FairSharing `json:"fairSharing,omitempty"`
}

// LocalQueueStatus reports the state and usage of a LocalQueue.
type LocalQueueStatus struct {
	// conditions: Active.
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// pendingWorkloads waiting for admission.
	// +optional
	PendingWorkloads int32 `json:"pendingWorkloads"`

	// reservingWorkloads holding a quota reservation.
	// +optional
	ReservingWorkloads int32 `json:"reservingWorkloads"`

	// admittedWorkloads that are admitted.
	// +optional
	AdmittedWorkloads int32 `json:"admittedWorkloads"`

	// flavorsReservation: quota reserved by this queue's workloads.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	FlavorsReservation []LocalQueueFlavorUsage `json:"flavorsReservation,omitempty"`

	// flavorsUsage: quota used by this queue's admitted workloads.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	FlavorsUsage []LocalQueueFlavorUsage `json:"flavorsUsage,omitempty"`

	// fairSharing reports the share of this queue.
	// +optional
	FairSharing *LocalQueueFairSharingStatus `json:"fairSharing,omitempty"`
}

// LocalQueueFlavorUsage is the usage of one flavor by a LocalQueue.
type LocalQueueFlavorUsage struct {
	// name of the flavor.
	Name ResourceFlavorReference `json:"name"`

	// resources used in this flavor.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	Resources []LocalQueueResourceUsage `json:"resources"`
}

// LocalQueueResourceUsage is the usage of one resource by a LocalQueue.
type LocalQueueResourceUsage struct {
	// name of the resource.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=253
	Name corev1.ResourceName `json:"name"`

	// total used.
	// +optional
	Total resource.Quantity `json:"total,omitempty"`
}

// LocalQueueFairSharingStatus reports the share of a LocalQueue.
type LocalQueueFairSharingStatus struct {
	// weightedShare of the queue.
	WeightedShare int64 `json:"weightedShare"`

	// admissionFairSharingStatus: usage that admission fair sharing has seen.
	// +optional
	AdmissionFairSharingStatus *AdmissionFairSharingStatus `json:"admissionFairSharingStatus,omitempty"`
}

// AdmissionFairSharingStatus is the decayed usage of a LocalQueue.
type AdmissionFairSharingStatus struct {
	// consumedResources, decayed over time.
	ConsumedResources corev1.ResourceList `json:"consumedResources"`

	// lastUpdate of consumedResources.
	LastUpdate metav1.Time `json:"lastUpdate"`
}

// LocalQueue is a namespace's entry point: its workloads are admitted by the
// ClusterQueue it names.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:shortName={lq,queue,queues}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="ClusterQueue",JSONPath=".spec.clusterQueue",type=string,description="Backing ClusterQueue"
// +kubebuilder:printcolumn:name="Pending Workloads",JSONPath=".status.pendingWorkloads",type=integer,description="Number of pending workloads"
// +kubebuilder:printcolumn:name="Admitted Workloads",JSONPath=".status.admittedWorkloads",type=integer,description="Number of admitted workloads that haven't finished yet"
type LocalQueue struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec LocalQueueSpec `json:"spec,omitempty"`
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

func init() {
	register(&LocalQueue{}, &LocalQueueList{})
}
