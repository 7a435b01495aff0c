package v1beta2

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterQueueSpec defines the quota of a ClusterQueue and how it admits.
//
// +kubebuilder:validation:XValidation:rule="(has(self.cohortName) && size(self.cohortName) > 0) || !has(self.resourceGroups) || self.resourceGroups.all(rg, rg.flavors.all(f, f.resources.all(r, !has(r.borrowingLimit) && !has(r.lendingLimit))))",message="borrowingLimit and lendingLimit require a cohortName",fieldPath=".resourceGroups"
type ClusterQueueSpec struct {
	// resourceGroups describe the quota, per flavor and resource.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +optional
	ResourceGroups []ResourceGroup `json:"resourceGroups,omitempty"`

	// cohortName is the Cohort this queue belongs to. The Cohort object need
	// not exist (an implicit cohort).
	// +optional
	CohortName CohortReference `json:"cohortName,omitempty"`

	// queueingStrategy orders the pending workloads of this queue.
	// +kubebuilder:default=BestEffortFIFO
	// +optional
	QueueingStrategy QueueingStrategy `json:"queueingStrategy,omitempty"`

	// namespaceSelector chooses the namespaces whose LocalQueues may submit to
	// this queue. null selects no namespace; {} selects all.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`

	// flavorFungibility decides when the flavor search stops.
	// +kubebuilder:default={}
	// +optional
	FlavorFungibility *FlavorFungibility `json:"flavorFungibility,omitempty"`

	// preemption decides which admitted workloads a pending one may evict.
	// +kubebuilder:default={}
	// +optional
	Preemption *ClusterQueuePreemption `json:"preemption,omitempty"`

	// admissionChecksStrategy lists the checks a workload must pass before it is
	// admitted.
	// +optional
	AdmissionChecksStrategy *AdmissionChecksStrategy `json:"admissionChecksStrategy,omitempty"`

	// stopPolicy stops admission (Hold) and evicts admitted workloads
	// (HoldAndDrain).
	// +kubebuilder:default=None
	// +optional
	StopPolicy *StopPolicy `json:"stopPolicy,omitempty"`

	// fairSharing holds the weight of this queue in its cohort.
	// +optional
	FairSharing *FairSharing `json:"fairSharing,omitempty"`

	// admissionScope selects admission fair sharing (stored; later release).
	// +optional
	AdmissionScope *AdmissionScope `json:"admissionScope,omitempty"`
}

// QueueingStrategy orders pending workloads.
// +kubebuilder:validation:Enum=StrictFIFO;BestEffortFIFO
type QueueingStrategy string

const (
	// StrictFIFO keeps the head at the head until it is admitted.
	StrictFIFO QueueingStrategy = "StrictFIFO"
	// BestEffortFIFO lets later workloads pass a head that doesn't fit.
	BestEffortFIFO QueueingStrategy = "BestEffortFIFO"
)

// FlavorFungibilityPolicy says whether to keep looking for a better flavor.
// +kubebuilder:validation:Enum=MayStopSearch;TryNextFlavor
type FlavorFungibilityPolicy string

const (
	// MayStopSearch takes the first flavor that fits.
	MayStopSearch FlavorFungibilityPolicy = "MayStopSearch"
	// TryNextFlavor looks at the next flavors before borrowing or preempting.
	TryNextFlavor FlavorFungibilityPolicy = "TryNextFlavor"
)

// FlavorFungibilityPreference breaks the tie between borrowing and preempting.
// +kubebuilder:validation:Enum=BorrowingOverPreemption;PreemptionOverBorrowing
type FlavorFungibilityPreference string

const (
	BorrowingOverPreemption FlavorFungibilityPreference = "BorrowingOverPreemption"
	PreemptionOverBorrowing FlavorFungibilityPreference = "PreemptionOverBorrowing"
)

// FlavorFungibility decides when to stop the flavor search.
//
// +kubebuilder:validation:XValidation:rule="!has(self.preference) || (self.whenCanBorrow == 'TryNextFlavor' && self.whenCanPreempt == 'TryNextFlavor')",message="preference requires whenCanBorrow and whenCanPreempt to be TryNextFlavor",fieldPath=".preference"
type FlavorFungibility struct {
	// whenCanBorrow: MayStopSearch takes a flavor that fits by borrowing;
	// TryNextFlavor prefers a later flavor that fits without borrowing.
	// +kubebuilder:default=MayStopSearch
	// +optional
	WhenCanBorrow FlavorFungibilityPolicy `json:"whenCanBorrow,omitempty"`

	// whenCanPreempt: MayStopSearch takes a flavor that fits by preempting;
	// TryNextFlavor prefers a later flavor that fits without preempting.
	// +kubebuilder:default=TryNextFlavor
	// +optional
	WhenCanPreempt FlavorFungibilityPolicy `json:"whenCanPreempt,omitempty"`

	// preference chooses between borrowing and preemption when both policies
	// are TryNextFlavor.
	// +optional
	Preference *FlavorFungibilityPreference `json:"preference,omitempty"`
}

// PreemptionPolicy selects the workloads that may be preempted.
// +kubebuilder:validation:Enum=Never;LowerPriority;LowerOrNewerEqualPriority;Any
type PreemptionPolicy string

const (
	PreemptionPolicyNever                     PreemptionPolicy = "Never"
	PreemptionPolicyLowerPriority             PreemptionPolicy = "LowerPriority"
	PreemptionPolicyLowerOrNewerEqualPriority PreemptionPolicy = "LowerOrNewerEqualPriority"
	PreemptionPolicyAny                       PreemptionPolicy = "Any"
)

// BorrowWithinCohortPolicy selects the workloads a borrowing workload may preempt.
// +kubebuilder:validation:Enum=Never;LowerPriority
type BorrowWithinCohortPolicy string

const (
	BorrowWithinCohortPolicyNever         BorrowWithinCohortPolicy = "Never"
	BorrowWithinCohortPolicyLowerPriority BorrowWithinCohortPolicy = "LowerPriority"
)

// ClusterQueuePreemption describes what a pending workload of this queue may
// preempt.
//
// +kubebuilder:validation:XValidation:rule="self.reclaimWithinCohort != 'Never' || !has(self.borrowWithinCohort) || self.borrowWithinCohort.policy == 'Never'",message="reclaimWithinCohort=Never forbids a borrowWithinCohort policy other than Never",fieldPath=".borrowWithinCohort"
type ClusterQueuePreemption struct {
	// reclaimWithinCohort: whether to evict borrowing workloads of other queues
	// of the cohort to get nominal quota back.
	// +kubebuilder:default=Never
	// +kubebuilder:validation:Enum=Never;LowerPriority;Any
	// +optional
	ReclaimWithinCohort PreemptionPolicy `json:"reclaimWithinCohort,omitempty"`

	// borrowWithinCohort: whether a workload that borrows may preempt.
	// +optional
	BorrowWithinCohort *BorrowWithinCohort `json:"borrowWithinCohort,omitempty"`

	// withinClusterQueue: whether to evict workloads of this queue.
	// +kubebuilder:default=Never
	// +kubebuilder:validation:Enum=Never;LowerPriority;LowerOrNewerEqualPriority
	// +optional
	WithinClusterQueue PreemptionPolicy `json:"withinClusterQueue,omitempty"`
}

// BorrowWithinCohort lets a borrowing workload preempt lower-priority workloads.
type BorrowWithinCohort struct {
	// policy of preemption while borrowing.
	// +kubebuilder:default=Never
	// +optional
	Policy BorrowWithinCohortPolicy `json:"policy,omitempty"`

	// maxPriorityThreshold: only workloads at or below this priority may be
	// preempted.
	// +optional
	MaxPriorityThreshold *int32 `json:"maxPriorityThreshold,omitempty"`
}

// AdmissionChecksStrategy lists the admission checks of a ClusterQueue.
type AdmissionChecksStrategy struct {
	// admissionChecks to run, each on all flavors or only the listed ones.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	AdmissionChecks []AdmissionCheckStrategyRule `json:"admissionChecks,omitempty"`
}

// AdmissionCheckStrategyRule names an admission check and where it applies.
type AdmissionCheckStrategyRule struct {
	// name of the AdmissionCheck.
	// +kubebuilder:validation:MaxLength=316
	Name string `json:"name"`

	// onFlavors limits the check to these flavors; empty means all.
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +optional
	OnFlavors []ResourceFlavorReference `json:"onFlavors,omitempty"`
}

// AdmissionMode selects admission fair sharing.
// +kubebuilder:validation:Enum=UsageBasedAdmissionFairSharing;NoAdmissionFairSharing
type AdmissionMode string

// AdmissionScope configures admission fair sharing (stored; later release).
type AdmissionScope struct {
	// +required
	AdmissionMode AdmissionMode `json:"admissionMode"`
}

// ClusterQueueStatus reports the state and usage of a ClusterQueue.
type ClusterQueueStatus struct {
	// conditions: Active.
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// flavorsReservation: quota reserved by workloads with QuotaReserved.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	FlavorsReservation []FlavorUsage `json:"flavorsReservation,omitempty"`

	// flavorsUsage: quota used by admitted workloads.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	FlavorsUsage []FlavorUsage `json:"flavorsUsage,omitempty"`

	// pendingWorkloads waiting for admission.
	// +optional
	PendingWorkloads int32 `json:"pendingWorkloads"`

	// reservingWorkloads holding a quota reservation.
	// +optional
	ReservingWorkloads int32 `json:"reservingWorkloads"`

	// admittedWorkloads that are admitted.
	// +optional
	AdmittedWorkloads int32 `json:"admittedWorkloads"`

	// fairSharing reports the share of this queue.
	// +optional
	FairSharing *FairSharingStatus `json:"fairSharing,omitempty"`
}

// FlavorUsage is the usage of one flavor.
type FlavorUsage struct {
	// name of the flavor.
	Name ResourceFlavorReference `json:"name"`

	// resources used in this flavor.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	Resources []ResourceUsage `json:"resources"`
}

// ResourceUsage is the usage of one resource in a flavor.
type ResourceUsage struct {
	// name of the resource.
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// total used, including what is borrowed.
	// +optional
	Total resource.Quantity `json:"total,omitempty"`

	// borrowed above the nominal quota.
	// +optional
	Borrowed resource.Quantity `json:"borrowed,omitempty"`
}

// ClusterQueue holds quota per flavor and resource and admits the workloads of
// its LocalQueues.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:scope=Cluster,shortName={cq}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cohort",JSONPath=".spec.cohortName",type=string,description="Cohort that this ClusterQueue belongs to"
// +kubebuilder:printcolumn:name="Strategy",JSONPath=".spec.queueingStrategy",type=string,description="The queueing strategy used to prioritize workloads",priority=1
// +kubebuilder:printcolumn:name="Pending Workloads",JSONPath=".status.pendingWorkloads",type=integer,description="Number of pending workloads"
// +kubebuilder:printcolumn:name="Admitted Workloads",JSONPath=".status.admittedWorkloads",type=integer,description="Number of admitted workloads that haven't finished yet",priority=1
type ClusterQueue struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec ClusterQueueSpec `json:"spec,omitempty"`
	// +optional
	Status ClusterQueueStatus `json:"status,omitempty"`
}

// ClusterQueueList is a list of ClusterQueues.
//
// +kubebuilder:object:root=true
type ClusterQueueList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterQueue `json:"items"`
}

func init() {
	register(&ClusterQueue{}, &ClusterQueueList{})
}
