package v1beta2

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// GroupVersion of the configuration file.
const (
	Group   = "config.kueue.x-k8s.io"
	Version = "v1beta2"
	Kind    = "Configuration"
)

// Configuration is the manager's configuration file. Its fields, their JSON
// names and defaults are Kueue's (v0.19) so that a Kueue file loads
// unchanged; what sluice does with each field is in docs/configuration.md
// and in Support (support.go).
//
// +kubebuilder:object:root=true
type Configuration struct {
	metav1.TypeMeta `json:",inline"`

	// Namespace the manager runs in; its namespace is never managed.
	Namespace *string `json:"namespace,omitempty"`

	ControllerManager `json:",inline"`

	// ManageJobsWithoutQueueName makes sluice manage jobs that have no
	// queue-name label, in the namespaces of ManagedJobsNamespaceSelector.
	ManageJobsWithoutQueueName bool `json:"manageJobsWithoutQueueName"`

	// ManagedJobsNamespaceSelector: the namespaces whose jobs sluice
	// manages, labelled or not.
	ManagedJobsNamespaceSelector *metav1.LabelSelector `json:"managedJobsNamespaceSelector,omitempty"`

	// InternalCertManagement: the manager creates and rotates its webhook
	// certificates itself (default), or uses certificates provided in CertDir.
	InternalCertManagement *InternalCertManagement `json:"internalCertManagement,omitempty"`

	// WaitForPodsReady: present means on (Kueue >= 0.19 defaults it on).
	WaitForPodsReady *WaitForPodsReady `json:"waitForPodsReady,omitempty"`

	// ClientConnection tunes the manager's API client.
	ClientConnection *ClientConnection `json:"clientConnection,omitempty"`

	// Integrations lists the job frameworks sluice manages.
	Integrations *Integrations `json:"integrations,omitempty"`

	// MultiKueue configures dispatching to worker clusters.
	MultiKueue *MultiKueue `json:"multiKueue,omitempty"`

	// FairSharing: present means on. It orders borrowing by weighted share
	// and lets queues below their fair share preempt borrowers above theirs.
	FairSharing *FairSharing `json:"fairSharing,omitempty"`

	// AdmissionFairSharing orders a queue's workloads by their LocalQueue's
	// past usage.
	AdmissionFairSharing *AdmissionFairSharing `json:"admissionFairSharing,omitempty"`

	// Resources: which resources count, and how they are transformed
	// before they count.
	Resources *Resources `json:"resources,omitempty"`

	// FeatureGates by Kueue's gate names.
	FeatureGates map[string]bool `json:"featureGates,omitempty"`

	// ObjectRetentionPolicies: when finished or deactivated Workloads are
	// deleted.
	ObjectRetentionPolicies *ObjectRetentionPolicies `json:"objectRetentionPolicies,omitempty"`

	// VisibilityServer serves the visibility API.
	VisibilityServer *VisibilityServerConfiguration `json:"visibilityServer,omitempty"`
}

// ControllerManager holds the process's servers and controller settings.
type ControllerManager struct {
	Webhook        ControllerWebhook `json:"webhook,omitempty"`
	LeaderElection *LeaderElection   `json:"leaderElection,omitempty"`
	Metrics        ControllerMetrics `json:"metrics,omitempty"`
	Health         ControllerHealth  `json:"health,omitempty"`
	// PprofBindAddress serves Go's profiles there; empty is off.
	PprofBindAddress string                       `json:"pprofBindAddress,omitempty"`
	Controller       *ControllerConfigurationSpec `json:"controller,omitempty"`
	TLS              *TLSOptions                  `json:"tls,omitempty"`
}

// ControllerWebhook configures the webhook server.
type ControllerWebhook struct {
	Port    *int   `json:"port,omitempty"`
	Host    string `json:"host,omitempty"`
	CertDir string `json:"certDir,omitempty"`
}

// LeaderElection configures leader election on a Lease (the JSON of
// component-base's LeaderElectionConfiguration).
type LeaderElection struct {
	LeaderElect       *bool            `json:"leaderElect,omitempty"`
	LeaseDuration     *metav1.Duration `json:"leaseDuration,omitempty"`
	RenewDeadline     *metav1.Duration `json:"renewDeadline,omitempty"`
	RetryPeriod       *metav1.Duration `json:"retryPeriod,omitempty"`
	ResourceLock      string           `json:"resourceLock,omitempty"`
	ResourceName      string           `json:"resourceName,omitempty"`
	ResourceNamespace string           `json:"resourceNamespace,omitempty"`
}

// ControllerMetrics configures the metrics endpoint and optional series.
type ControllerMetrics struct {
	// BindAddress of the endpoint; "0" disables it.
	BindAddress                 string                         `json:"bindAddress,omitempty"`
	EnableClusterQueueResources bool                           `json:"enableClusterQueueResources,omitempty"`
	CustomLabels                []ControllerMetricsCustomLabel `json:"customLabels,omitempty"`
	LocalQueueMetrics           *LocalQueueMetrics             `json:"localQueueMetrics,omitempty"`
}

// SourceKind is the kind whose label or annotation a custom metric label
// comes from.
type SourceKind string

// The source kinds of custom metric labels.
const (
	SourceKindCohort       SourceKind = "Cohort"
	SourceKindLocalQueue   SourceKind = "LocalQueue"
	SourceKindClusterQueue SourceKind = "ClusterQueue"
	SourceKindWorkload     SourceKind = "Workload"
)

// ControllerMetricsCustomLabel adds a label to the queue metrics.
type ControllerMetricsCustomLabel struct {
	Name                string      `json:"name"`
	SourceLabelKey      string      `json:"sourceLabelKey,omitempty"`
	SourceAnnotationKey string      `json:"sourceAnnotationKey,omitempty"`
	SourceKind          *SourceKind `json:"sourceKind,omitempty"`
	TrackedValues       []string    `json:"trackedValues,omitempty"`
}

// LocalQueueMetrics turns on per-LocalQueue series.
type LocalQueueMetrics struct {
	Enable             bool                  `json:"enable,omitempty"`
	LocalQueueSelector *metav1.LabelSelector `json:"localQueueSelector,omitempty"`
}

// ControllerHealth configures the health probe endpoint.
type ControllerHealth struct {
	HealthProbeBindAddress string `json:"healthProbeBindAddress,omitempty"`
	ReadinessEndpointName  string `json:"readinessEndpointName,omitempty"`
	LivenessEndpointName   string `json:"livenessEndpointName,omitempty"`
}

// ControllerConfigurationSpec tunes the controllers.
type ControllerConfigurationSpec struct {
	// GroupKindConcurrency: workers per controller, keyed Kind.group
	// ("Job.batch", "Pod", "Workload.kueue.x-k8s.io").
	GroupKindConcurrency map[string]int `json:"groupKindConcurrency,omitempty"`
	// CacheSyncTimeout bounds the wait for the informers to fill (a number
	// of nanoseconds, as in Kueue).
	CacheSyncTimeout *time.Duration `json:"cacheSyncTimeout,omitempty"`
}

// WaitForPodsReady evicts admitted workloads whose pods are not all ready
// in time.
type WaitForPodsReady struct {
	Timeout           metav1.Duration    `json:"timeout"`
	BlockAdmission    *bool              `json:"blockAdmission,omitempty"`
	RequeuingStrategy *RequeuingStrategy `json:"requeuingStrategy,omitempty"`
	RecoveryTimeout   *metav1.Duration   `json:"recoveryTimeout,omitempty"`
}

// RequeuingStrategy tells when a workload that timed out is requeued.
type RequeuingStrategy struct {
	Timestamp          *RequeuingTimestamp `json:"timestamp,omitempty"`
	BackoffLimitCount  *int32              `json:"backoffLimitCount,omitempty"`
	BackoffBaseSeconds *int32              `json:"backoffBaseSeconds,omitempty"`
	BackoffMaxSeconds  *int32              `json:"backoffMaxSeconds,omitempty"`
}

// RequeuingTimestamp is the time a requeued workload is ordered by.
type RequeuingTimestamp string

// The requeuing timestamps.
const (
	CreationTimestamp RequeuingTimestamp = "Creation"
	EvictionTimestamp RequeuingTimestamp = "Eviction"
)

// MultiKueue configures dispatching to worker clusters.
type MultiKueue struct {
	GCInterval                  *metav1.Duration              `json:"gcInterval"`
	Origin                      *string                       `json:"origin,omitempty"`
	WorkerLostTimeout           *metav1.Duration              `json:"workerLostTimeout,omitempty"`
	DispatcherName              *string                       `json:"dispatcherName,omitempty"`
	ExternalFrameworks          []MultiKueueExternalFramework `json:"externalFrameworks,omitempty"`
	ClusterProfile              *ClusterProfile               `json:"clusterProfile,omitempty"`
	IncrementalDispatcherConfig *IncrementalDispatcherConfig  `json:"incrementalDispatcherConfig,omitempty"`
}

// The MultiKueue dispatchers.
const (
	MultiKueueDispatcherModeAllAtOnce   = "kueue.x-k8s.io/multikueue-dispatcher-all-at-once"
	MultiKueueDispatcherModeIncremental = "kueue.x-k8s.io/multikueue-dispatcher-incremental"
)

// IncrementalDispatcherConfig: how many workers the incremental dispatcher
// adds at a time.
type IncrementalDispatcherConfig struct {
	StepSize *int32 `json:"stepSize,omitempty"`
}

// MultiKueueExternalFramework names a kind MultiKueue dispatches.
type MultiKueueExternalFramework struct {
	Name string `json:"name"`
}

// ClusterProfile configures access to clusters of the ClusterProfile API.
type ClusterProfile struct {
	AccessProviders      []ClusterProfileAccessProvider `json:"accessProviders,omitempty"`
	CredentialsProviders []ClusterProfileAccessProvider `json:"credentialsProviders,omitempty"`
}

// ClusterProfileAccessProvider is an exec credential plugin for clusters.
type ClusterProfileAccessProvider struct {
	Name       string                  `json:"name"`
	ExecConfig clientcmdapi.ExecConfig `json:"execConfig"`
}

// InternalCertManagement configures the webhook certificates.
type InternalCertManagement struct {
	// Enable makes the manager create and rotate its certificates.
	Enable *bool `json:"enable,omitempty"`
	// WebhookServiceName is the Service in front of the webhook server.
	WebhookServiceName *string `json:"webhookServiceName,omitempty"`
	// WebhookSecretName is the Secret that holds the certificates.
	WebhookSecretName *string `json:"webhookSecretName,omitempty"`
}

// TLSOptions for the manager's servers.
type TLSOptions struct {
	MinVersion       string   `json:"minVersion,omitempty"`
	CipherSuites     []string `json:"cipherSuites,omitempty"`
	CurvePreferences []int32  `json:"curvePreferences,omitempty"`
}

// ClientConnection tunes the API client.
type ClientConnection struct {
	// QPS: sustained requests per second.
	QPS *float32 `json:"qps,omitempty"`
	// Burst: requests allowed above QPS for short periods.
	Burst *int32 `json:"burst,omitempty"`
}

// Integrations lists the enabled job frameworks.
type Integrations struct {
	// Frameworks, e.g. batch/job, pod, deployment, statefulset.
	Frameworks []string `json:"frameworks,omitempty"`
	// ExternalFrameworks: Kind.version.group of kinds whose Workloads an
	// external controller creates.
	ExternalFrameworks []string `json:"externalFrameworks,omitempty"`
	// LabelKeysToCopy: labels of a job copied to the Workload made for it.
	LabelKeysToCopy []string `json:"labelKeysToCopy,omitempty"`
}

// QuotaCheckStrategy: whether a resource no ClusterQueue declares blocks
// admission.
type QuotaCheckStrategy string

// The quota check strategies.
const (
	QuotaCheckBlockUndeclared  QuotaCheckStrategy = "BlockUndeclared"
	QuotaCheckIgnoreUndeclared QuotaCheckStrategy = "IgnoreUndeclared"
)

// Resources: which resources count, and how.
type Resources struct {
	QuotaCheckStrategy *QuotaCheckStrategy `json:"quotaCheckStrategy,omitempty"`
	// ExcludeResourcePrefixes: resources whose name starts with one of
	// these are not counted.
	ExcludeResourcePrefixes []string                 `json:"excludeResourcePrefixes,omitempty"`
	Transformations         []ResourceTransformation `json:"transformations,omitempty"`
	DeviceClassMappings     []DeviceClassMapping     `json:"deviceClassMappings,omitempty"`
}

// ResourceTransformationStrategy: whether the input resource still counts
// after it is transformed.
type ResourceTransformationStrategy string

// The transformation strategies.
const (
	Retain  ResourceTransformationStrategy = "Retain"
	Replace ResourceTransformationStrategy = "Replace"
)

// ResourceTransformation turns a request of Input into requests of Outputs
// (per unit of Input, or of MultiplyBy when set).
type ResourceTransformation struct {
	Input      corev1.ResourceName             `json:"input"`
	Strategy   *ResourceTransformationStrategy `json:"strategy,omitempty"`
	MultiplyBy corev1.ResourceName             `json:"multiplyBy,omitempty"`
	Outputs    corev1.ResourceList             `json:"outputs,omitempty"`
}

// DeviceClassMapping counts dynamic resource claims of device classes as a
// resource.
type DeviceClassMapping struct {
	Name             corev1.ResourceName       `json:"name"`
	DeviceClassNames []corev1.ResourceName     `json:"deviceClassNames"`
	Sources          []DeviceClassSourceConfig `json:"sources,omitempty"`
}

// DeviceClassSourceConfig: where a mapped device's amount comes from.
type DeviceClassSourceConfig struct {
	Counter  *DeviceClassCounterSource  `json:"counter,omitempty"`
	Capacity *DeviceClassCapacitySource `json:"capacity,omitempty"`
}

// DeviceClassCounterSource counts a device counter.
type DeviceClassCounterSource struct {
	Name           string                    `json:"name"`
	Driver         string                    `json:"driver"`
	DeviceSelector resourcev1.DeviceSelector `json:"deviceSelector"`
}

// DeviceClassCapacitySource counts a device capacity.
type DeviceClassCapacitySource struct {
	Name           resourcev1.QualifiedName  `json:"name"`
	Driver         string                    `json:"driver"`
	DeviceSelector resourcev1.DeviceSelector `json:"deviceSelector"`
}

// PreemptionStrategy of fair sharing.
type PreemptionStrategy string

// The fair-sharing preemption strategies.
const (
	LessThanOrEqualToFinalShare PreemptionStrategy = "LessThanOrEqualToFinalShare"
	LessThanInitialShare        PreemptionStrategy = "LessThanInitialShare"
)

// FairSharing configures fair sharing between the queues of a cohort.
type FairSharing struct {
	PreemptionStrategies []PreemptionStrategy `json:"preemptionStrategies"`
}

// AdmissionFairSharing orders workloads by their LocalQueue's usage.
type AdmissionFairSharing struct {
	UsageHalfLifeTime     metav1.Duration                 `json:"usageHalfLifeTime"`
	UsageSamplingInterval metav1.Duration                 `json:"usageSamplingInterval"`
	ResourceWeights       map[corev1.ResourceName]float64 `json:"resourceWeights,omitempty"`
}

// ObjectRetentionPolicies: when objects sluice no longer needs are deleted.
type ObjectRetentionPolicies struct {
	Workloads *WorkloadRetentionPolicy `json:"workloads,omitempty"`
}

// WorkloadRetentionPolicy: unset keeps Workloads forever; 0s deletes them
// at once.
type WorkloadRetentionPolicy struct {
	AfterFinished           *metav1.Duration `json:"afterFinished,omitempty"`
	AfterDeactivatedByKueue *metav1.Duration `json:"afterDeactivatedByKueue,omitempty"`
}

// VisibilityServerConfiguration: where the visibility API is served.
type VisibilityServerConfiguration struct {
	BindAddress *string `json:"bindAddress,omitempty"`
	BindPort    *int32  `json:"bindPort,omitempty"`
}
