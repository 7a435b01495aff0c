package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// WorkloadSpec is what a job asks for: its pod sets, queue and priority.
//
// +kubebuilder:validation:XValidation:rule="!has(self.priorityClassRef) || has(self.priority)",message="priority must be set when priorityClassRef is set",fieldPath=".priority"
type WorkloadSpec struct {
	// podSets are the groups of identical pods of the workload.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=18
	// +kubebuilder:validation:XValidation:rule="self.filter(ps, has(ps.minCount)).size() <= 1",message="at most one podSet can use minCount"
	PodSets []PodSet `json:"podSets"`

	// queueName is the LocalQueue, in the same namespace, to submit to.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern="^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$"
	// +optional
	QueueName LocalQueueName `json:"queueName,omitempty"`

	// priorityClassRef names the class the priority came from.
	// +optional
	PriorityClassRef *PriorityClassRef `json:"priorityClassRef,omitempty"`

	// priority of the workload; higher admits first.
	// +optional
	Priority *int32 `json:"priority,omitempty"`

	// active: false evicts the workload and keeps it out of the queue.
	// +kubebuilder:default=true
	// +optional
	Active *bool `json:"active,omitempty"`

	// maximumExecutionTimeSeconds deactivates the workload once it has run that
	// long while admitted.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaximumExecutionTimeSeconds *int32 `json:"maximumExecutionTimeSeconds,omitempty"`

	// preemptionGates hold back preemption (stored; later release).
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=8
	// +optional
	PreemptionGates []PreemptionGate `json:"preemptionGates,omitempty"`
}

// PriorityClassGroup is the API group of a priority class.
// +kubebuilder:validation:Enum=kueue.x-k8s.io;scheduling.k8s.io
type PriorityClassGroup string

// PriorityClassKind is the kind of a priority class.
// +kubebuilder:validation:Enum=WorkloadPriorityClass;PriorityClass
type PriorityClassKind string

const (
	WorkloadPriorityClassGroup PriorityClassGroup = "kueue.x-k8s.io"
	PodPriorityClassGroup      PriorityClassGroup = "scheduling.k8s.io"
	WorkloadPriorityClassKind  PriorityClassKind  = "WorkloadPriorityClass"
	PodPriorityClassKind       PriorityClassKind  = "PriorityClass"
)

// PriorityClassRef names a WorkloadPriorityClass or a pod PriorityClass.
//
// +kubebuilder:validation:XValidation:rule="(self.group == 'kueue.x-k8s.io' && self.kind == 'WorkloadPriorityClass') || (self.group == 'scheduling.k8s.io' && self.kind == 'PriorityClass')",message="group kueue.x-k8s.io goes with kind WorkloadPriorityClass, group scheduling.k8s.io with kind PriorityClass",fieldPath=".kind"
type PriorityClassRef struct {
	// +required
	Group PriorityClassGroup `json:"group"`
	// +required
	Kind PriorityClassKind `json:"kind"`
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// PreemptionGate holds back the preemption of a workload while present.
type PreemptionGate struct {
	// +kubebuilder:validation:MaxLength=316
	Name string `json:"name"`
}

// PodSet is a group of pods with the same template.
//
// +kubebuilder:validation:XValidation:rule="!has(self.minCount) || self.minCount <= self.count",message="minCount must not exceed count",fieldPath=".minCount"
type PodSet struct {
	// name of the podSet, a DNS label.
	// +kubebuilder:default=main
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
	Name PodSetReference `json:"name"`

	// template of the pods.
	Template corev1.PodTemplateSpec `json:"template"`

	// count of pods.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	Count int32 `json:"count"`

	// minCount allows partial admission: at least this many pods.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MinCount *int32 `json:"minCount,omitempty"`

	// topologyRequest for topology-aware scheduling (stored; later release).
	// +optional
	TopologyRequest *PodSetTopologyRequest `json:"topologyRequest,omitempty"`
}

// PodSetReference is the name of a podSet.
type PodSetReference string

// PodSetTopologyRequest asks for pods placed within a topology domain
// (stored; topology-aware scheduling comes in a later release).
type PodSetTopologyRequest struct {
	// +optional
	Required *string `json:"required,omitempty"`
	// +optional
	Preferred *string `json:"preferred,omitempty"`
	// +optional
	Unconstrained *bool `json:"unconstrained,omitempty"`
	// +optional
	PodIndexLabel *string `json:"podIndexLabel,omitempty"`
	// +optional
	SubGroupIndexLabel *string `json:"subGroupIndexLabel,omitempty"`
	// +optional
	SubGroupCount *int32 `json:"subGroupCount,omitempty"`
	// +optional
	PodSetGroupName *string `json:"podSetGroupName,omitempty"`
	// +optional
	PodSetSliceRequiredTopology *string `json:"podSetSliceRequiredTopology,omitempty"`
	// +optional
	PodSetSliceSize *int32 `json:"podSetSliceSize,omitempty"`
}

// WorkloadStatus is the admission state of a workload.
type WorkloadStatus struct {
	// conditions: QuotaReserved, Admitted, Evicted, Preempted, Requeued,
	// PodsReady, Finished, DeactivationTarget.
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// admission: the ClusterQueue and flavors assigned while quota is reserved.
	// +optional
	Admission *Admission `json:"admission,omitempty"`

	// requeueState: how often and when the workload is requeued.
	// +optional
	RequeueState *RequeueState `json:"requeueState,omitempty"`

	// reclaimablePods: pods per podSet that are done and free their quota.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=18
	// +optional
	ReclaimablePods []ReclaimablePod `json:"reclaimablePods,omitempty"`

	// admissionChecks: the state of each admission check.
	// +listType=map
	// +listMapKey=name
	// +patchStrategy=merge
	// +patchMergeKey=name
	// +kubebuilder:validation:MaxItems=8
	// +optional
	AdmissionChecks []AdmissionCheckState `json:"admissionChecks,omitempty" patchStrategy:"merge" patchMergeKey:"name"`

	// resourceRequests: the effective requests of one pod of each podSet.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=18
	// +optional
	ResourceRequests []PodSetRequest `json:"resourceRequests,omitempty"`

	// accumulatedPastExecutionTimeSeconds: time admitted before the last
	// eviction.
	// +optional
	AccumulatedPastExecutionTimeSeconds *int32 `json:"accumulatedPastExecutionTimeSeconds,omitempty"`

	// nominatedClusterNames: worker clusters considered (MultiKueue).
	// +listType=set
	// +kubebuilder:validation:MaxItems=20
	// +optional
	NominatedClusterNames []string `json:"nominatedClusterNames,omitempty"`

	// clusterName: the worker cluster the workload runs on (MultiKueue).
	// +optional
	ClusterName *string `json:"clusterName,omitempty"`
}

// Admission is the quota reservation of a workload.
type Admission struct {
	// clusterQueue that reserved the quota.
	// +required
	ClusterQueue ClusterQueueReference `json:"clusterQueue"`

	// podSetAssignments: one per podSet.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=18
	PodSetAssignments []PodSetAssignment `json:"podSetAssignments"`
}

// PodSetAssignment is the flavor and usage assigned to one podSet.
type PodSetAssignment struct {
	// name of the podSet.
	// +kubebuilder:default=main
	Name PodSetReference `json:"name"`

	// flavors assigned to each resource.
	// +optional
	Flavors map[corev1.ResourceName]ResourceFlavorReference `json:"flavors,omitempty"`

	// resourceUsage: the total of the podSet.
	// +optional
	ResourceUsage corev1.ResourceList `json:"resourceUsage,omitempty"`

	// count of pods admitted (less than the podSet's count with partial
	// admission).
	// +kubebuilder:validation:Minimum=0
	// +optional
	Count *int32 `json:"count,omitempty"`

	// topologyAssignment (stored as given; topology-aware scheduling comes in
	// a later release).
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	TopologyAssignment *runtime.RawExtension `json:"topologyAssignment,omitempty"`

	// delayedTopologyRequest (stored; later release).
	// +optional
	DelayedTopologyRequest *string `json:"delayedTopologyRequest,omitempty"`
}

// RequeueState tells when a workload is requeued.
type RequeueState struct {
	// count of requeues.
	// +optional
	Count *int32 `json:"count,omitempty"`
	// requeueAt: not before this time.
	// +optional
	RequeueAt *metav1.Time `json:"requeueAt,omitempty"`
}

// ReclaimablePod is the number of finished pods of a podSet.
type ReclaimablePod struct {
	// name of the podSet.
	Name PodSetReference `json:"name"`
	// count of pods that no longer need quota.
	// +kubebuilder:validation:Minimum=0
	Count int32 `json:"count"`
}

// CheckState is the state of an admission check.
// +kubebuilder:validation:Enum=Pending;Ready;Retry;Rejected
type CheckState string

const (
	CheckStatePending  CheckState = "Pending"
	CheckStateReady    CheckState = "Ready"
	CheckStateRetry    CheckState = "Retry"
	CheckStateRejected CheckState = "Rejected"
)

// AdmissionCheckState is the state of one admission check for a workload.
type AdmissionCheckState struct {
	// name of the AdmissionCheck.
	// +kubebuilder:validation:MaxLength=316
	Name string `json:"name"`
	// state of the check.
	State CheckState `json:"state"`
	// lastTransitionTime of the state.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=date-time
	LastTransitionTime metav1.Time `json:"lastTransitionTime"`
	// message from the check's controller.
	// +kubebuilder:validation:MaxLength=32768
	// +optional
	Message string `json:"message,omitempty"`
	// requeueAfterSeconds: with state Retry, the least time after
	// lastTransitionTime before the workload is queued again (nil: at once).
	// +kubebuilder:validation:Minimum=0
	// +optional
	RequeueAfterSeconds *int32 `json:"requeueAfterSeconds,omitempty"`
	// retryCount counts the times the check went to Retry for this workload.
	// +kubebuilder:validation:Minimum=0
	// +optional
	RetryCount *int32 `json:"retryCount,omitempty"`
	// podSetUpdates the check asks to apply to the pods.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=18
	// +optional
	PodSetUpdates []PodSetUpdate `json:"podSetUpdates,omitempty"`
}

// PodSetUpdate is what an admission check adds to a podSet's pods.
type PodSetUpdate struct {
	// name of the podSet.
	Name PodSetReference `json:"name"`
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// PodSetRequest is the effective request of one pod of a podSet.
type PodSetRequest struct {
	// name of the podSet.
	Name PodSetReference `json:"name"`
	// resources of one pod.
	// +optional
	Resources corev1.ResourceList `json:"resources,omitempty"`
}

// Workload is the unit of admission: what a job needs, where it waits and
// what it was given.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
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

func init() {
	register(&Workload{}, &WorkloadList{})
}
