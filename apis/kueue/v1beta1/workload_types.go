package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// The priority class sources of v1beta1 (v1beta2 names group and kind).
const (
	WorkloadPriorityClassSource = "kueue.x-k8s.io/workloadpriorityclass"
	PodPriorityClassSource      = "scheduling.k8s.io/priorityclass"
)

// WorkloadSpec of v1beta1: priorityClassSource and priorityClassName are
// v1beta2's priorityClassRef.
//
// +kubebuilder:validation:XValidation:rule="has(self.priorityClassName) ? has(self.priority) : true",message="priority should not be nil when priorityClassName is set"
type WorkloadSpec struct {
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=18
	// +kubebuilder:validation:XValidation:rule="self.filter(ps, has(ps.minCount)).size() <= 1",message="at most one podSet can use minCount"
	PodSets []v1beta2.PodSet `json:"podSets"`

	// +optional
	QueueName v1beta2.LocalQueueName `json:"queueName,omitempty"`

	// priorityClassName of the class the priority came from.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// +optional
	Priority *int32 `json:"priority,omitempty"`

	// priorityClassSource: the kind of priorityClassName.
	// +kubebuilder:default=""
	// +kubebuilder:validation:Enum=kueue.x-k8s.io/workloadpriorityclass;scheduling.k8s.io/priorityclass;""
	// +optional
	PriorityClassSource string `json:"priorityClassSource,omitempty"`

	// +kubebuilder:default=true
	// +optional
	Active *bool `json:"active,omitempty"`

	// +kubebuilder:validation:Minimum=1
	// +optional
	MaximumExecutionTimeSeconds *int32 `json:"maximumExecutionTimeSeconds,omitempty"`

	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=8
	// +optional
	PreemptionGates []v1beta2.PreemptionGate `json:"preemptionGates,omitempty"`
}

// WorkloadStatus of v1beta1: accumulatedPastExexcutionTimeSeconds (sic) is
// v1beta2's accumulatedPastExecutionTimeSeconds.
type WorkloadStatus struct {
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
	// +optional
	Admission *v1beta2.Admission `json:"admission,omitempty"`
	// +optional
	RequeueState *v1beta2.RequeueState `json:"requeueState,omitempty"`
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=18
	// +optional
	ReclaimablePods []v1beta2.ReclaimablePod `json:"reclaimablePods,omitempty"`
	// +listType=map
	// +listMapKey=name
	// +patchStrategy=merge
	// +patchMergeKey=name
	// +kubebuilder:validation:MaxItems=8
	// +optional
	AdmissionChecks []v1beta2.AdmissionCheckState `json:"admissionChecks,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=18
	// +optional
	ResourceRequests []v1beta2.PodSetRequest `json:"resourceRequests,omitempty"`
	// accumulatedPastExexcutionTimeSeconds, spelt as v1beta1 spelt it.
	// +optional
	AccumulatedPastExexcutionTimeSeconds *int32 `json:"accumulatedPastExexcutionTimeSeconds,omitempty"`
	// +listType=set
	// +kubebuilder:validation:MaxItems=20
	// +optional
	NominatedClusterNames []string `json:"nominatedClusterNames,omitempty"`
	// +optional
	ClusterName *string `json:"clusterName,omitempty"`
}

// Workload of v1beta1.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName={wl,kwl}
// +kubebuilder:subresource:status
// +kubebuilder:validation:XValidation:rule="!has(self.status) || !has(self.status.admission) || size(self.spec.podSets) == size(self.status.admission.podSetAssignments)",message="status.admission.podSetAssignments must have one entry per podSet",fieldPath=".status.admission.podSetAssignments"
// +kubebuilder:printcolumn:name="Queue",JSONPath=".spec.queueName",type=string,description="Name of the queue this workload was submitted to"
// +kubebuilder:printcolumn:name="Reserved in",JSONPath=".status.admission.clusterQueue",type=string,description="Name of the ClusterQueue where the workload is reserving quota"
// +kubebuilder:printcolumn:name="Admitted",JSONPath=".status.conditions[?(@.type=='Admitted')].status",type=string,description="Admission status"
// +kubebuilder:printcolumn:name="Finished",JSONPath=".status.conditions[?(@.type=='Finished')].status",type=string,description="Workload finished"
// +kubebuilder:printcolumn:name="Age",JSONPath=".metadata.creationTimestamp",type=date,description="Time this workload was created"
type Workload struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec WorkloadSpec `json:"spec,omitempty"`
	// +optional
	Status WorkloadStatus `json:"status,omitempty"`
}

// WorkloadList is a list of Workloads.
//
// +kubebuilder:object:root=true
type WorkloadList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Workload `json:"items"`
}
