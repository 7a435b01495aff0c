package v1beta2

// Labels and annotations of the user-facing contract.
const (
	QueueNameLabel             = "kueue.x-k8s.io/queue-name"
	PriorityClassLabel         = "kueue.x-k8s.io/priority-class"
	MaxExecTimeSecondsLabel    = "kueue.x-k8s.io/max-exec-time-seconds"
	PrebuiltWorkloadLabel      = "kueue.x-k8s.io/prebuilt-workload-name"
	JobMinParallelismAnno      = "kueue.x-k8s.io/job-min-parallelism"
	PodGroupNameLabel          = "kueue.x-k8s.io/pod-group-name"
	PodGroupTotalCountAnno     = "kueue.x-k8s.io/pod-group-total-count"
	PodGroupFastAdmissionAnno  = "kueue.x-k8s.io/pod-group-fast-admission"
	PodGroupServingAnno        = "kueue.x-k8s.io/pod-group-serving"
	RetriableInGroupAnno       = "kueue.x-k8s.io/retriable-in-group"
	StandaloneAnnotation       = "kueue.x-k8s.io/standalone"
	PodSuspendingParentAnno    = "kueue.x-k8s.io/pod-suspending-parent"
	ManagedLabel               = "kueue.x-k8s.io/managed"
	AdmissionSchedulingGate    = "kueue.x-k8s.io/admission"
	PodSetLabel                = "kueue.x-k8s.io/podset"
	WorkloadAnnotation         = "kueue.x-k8s.io/workload"
	JobUIDLabel                = "kueue.x-k8s.io/job-uid"
	ResourceInUseFinalizerName = "kueue.x-k8s.io/resource-in-use"

	// DefaultLocalQueueName is the LocalQueue used by jobs without a queue-name.
	DefaultLocalQueueName = "default"
	// DefaultPodSetName is the name of a podSet when a job has only one.
	DefaultPodSetName PodSetReference = "main"
	// ResourcePods is the reserved resource name that counts pods.
	ResourcePods = "pods"
)

// Condition types of queues and checks.
const (
	// ConditionActive tells whether a ClusterQueue, LocalQueue or
	// AdmissionCheck can be used.
	ConditionActive = "Active"
)

// ClusterQueue and LocalQueue Active condition reasons.
const (
	ReasonReady                  = "Ready"
	ReasonFlavorNotFound         = "FlavorNotFound"
	ReasonAdmissionCheckNotFound = "AdmissionCheckNotFound"
	ReasonAdmissionCheckInactive = "AdmissionCheckInactive"
	ReasonStopped                = "Stopped"
	ReasonTerminating            = "Terminating"
	// ReasonCohortCycle is sluice's reason for a queue whose cohort chain loops.
	ReasonCohortCycle = "CohortCycle"
	// ReasonNotImplemented: the queue uses a feature sluice does not
	// implement yet (topology-aware scheduling); it admits nothing rather
	// than ignore it.
	ReasonNotImplemented = "NotImplemented"
	// ReasonClusterQueueDoesNotExist and ReasonClusterQueueIsInactive explain an
	// inactive LocalQueue.
	ReasonClusterQueueDoesNotExist = "ClusterQueueDoesNotExist"
	ReasonClusterQueueIsInactive   = "ClusterQueueIsInactive"
)

// Workload condition types.
const (
	WorkloadQuotaReserved      = "QuotaReserved"
	WorkloadAdmitted           = "Admitted"
	WorkloadEvicted            = "Evicted"
	WorkloadPreempted          = "Preempted"
	WorkloadRequeued           = "Requeued"
	WorkloadPodsReady          = "PodsReady"
	WorkloadFinished           = "Finished"
	WorkloadDeactivationTarget = "DeactivationTarget"
)

// Workload QuotaReserved=False reasons.
const (
	ReasonWaitingForQuota              = "WaitingForQuota"
	ReasonNoMatchingFlavor             = "NoMatchingFlavor"
	ReasonExceedsMaxQuota              = "ExceedsMaxQuota"
	ReasonWaitingForPreemptedWorkloads = "WaitingForPreemptedWorkloads"
	ReasonMisconfigured                = "Misconfigured"
	ReasonPending                      = "Pending"
)

// Workload Evicted reasons.
const (
	EvictedByPreemption           = "Preempted"
	EvictedByPodsReadyTimeout     = "PodsReadyTimeout"
	EvictedByAdmissionCheck       = "AdmissionCheck"
	EvictedByClusterQueueStopped  = "ClusterQueueStopped"
	EvictedByLocalQueueStopped    = "LocalQueueStopped"
	EvictedByDeactivation         = "Deactivated"
	EvictedByMaximumExecutionTime = "MaximumExecutionTimeExceeded"
)

// Workload Preempted reasons.
const (
	InClusterQueueReason                = "InClusterQueue"
	InCohortReclamationReason           = "InCohortReclamation"
	InCohortFairSharingReason           = "InCohortFairSharing"
	InCohortReclaimWhileBorrowingReason = "InCohortReclaimWhileBorrowing"
)
