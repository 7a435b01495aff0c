package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GroupVersion of the configuration file.
const (
	Group   = "config.kueue.x-k8s.io"
	Version = "v1beta2"
	Kind    = "Configuration"
)

// Configuration is the manager's configuration file.
//
// +kubebuilder:object:root=true
type Configuration struct {
	metav1.TypeMeta `json:",inline"`

	// Namespace the manager runs in; its namespace is never managed.
	Namespace *string `json:"namespace,omitempty"`

	// ManageJobsWithoutQueueName makes sluice manage jobs that have no
	// queue-name label, in the namespaces of ManagedJobsNamespaceSelector.
	ManageJobsWithoutQueueName bool `json:"manageJobsWithoutQueueName"`

	// ManagedJobsNamespaceSelector limits ManageJobsWithoutQueueName (and the
	// pod integration) to these namespaces.
	ManagedJobsNamespaceSelector *metav1.LabelSelector `json:"managedJobsNamespaceSelector,omitempty"`

	// Integrations lists the job frameworks sluice manages.
	Integrations *Integrations `json:"integrations,omitempty"`

	// ClientConnection tunes the manager's API client. Unset QPS and Burst mean
	// no client-side throttling: the API server's flow control governs.
	ClientConnection *ClientConnection `json:"clientConnection,omitempty"`

	// WaitForPodsReady is accepted; its behaviour comes in a later release.
	WaitForPodsReady *WaitForPodsReady `json:"waitForPodsReady,omitempty"`

	// InternalCertManagement: the manager creates and rotates its webhook
	// certificates itself (default), or uses certificates provided in CertDir.
	InternalCertManagement *InternalCertManagement `json:"internalCertManagement,omitempty"`

	// Webhook server settings.
	Webhook *WebhookServer `json:"webhook,omitempty"`

	// LeaderElection settings.
	LeaderElection *LeaderElection `json:"leaderElection,omitempty"`

	// Metrics endpoint settings.
	Metrics *Metrics `json:"metrics,omitempty"`

	// Health probe endpoint settings.
	Health *Health `json:"health,omitempty"`

	// FairSharing orders borrowing by weighted share and lets queues below
	// their fair share preempt borrowers above theirs.
	FairSharing *FairSharing `json:"fairSharing,omitempty"`
}

// Integrations lists the enabled job frameworks.
type Integrations struct {
	// Frameworks, e.g. batch/job, pod, deployment, statefulset.
	Frameworks []string `json:"frameworks,omitempty"`
}

// ClientConnection tunes the API client.
type ClientConnection struct {
	// QPS: sustained requests per second; unset means unthrottled.
	QPS *float32 `json:"qps,omitempty"`
	// Burst: requests allowed above QPS for short periods.
	Burst *int32 `json:"burst,omitempty"`
}

// WaitForPodsReady holds admission until the pods of admitted workloads are
// ready (later release).
type WaitForPodsReady struct {
	Enable            bool               `json:"enable,omitempty"`
	Timeout           *metav1.Duration   `json:"timeout,omitempty"`
	BlockAdmission    *bool              `json:"blockAdmission,omitempty"`
	RequeuingStrategy *RequeuingStrategy `json:"requeuingStrategy,omitempty"`
	RecoveryTimeout   *metav1.Duration   `json:"recoveryTimeout,omitempty"`
}

// RequeuingStrategy tells when a workload that timed out is requeued.
type RequeuingStrategy struct {
	Timestamp          *string `json:"timestamp,omitempty"`
	BackoffLimitCount  *int32  `json:"backoffLimitCount,omitempty"`
	BackoffBaseSeconds *int32  `json:"backoffBaseSeconds,omitempty"`
	BackoffMaxSeconds  *int32  `json:"backoffMaxSeconds,omitempty"`
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

// WebhookServer configures the webhook server.
type WebhookServer struct {
	Host    string `json:"host,omitempty"`
	Port    *int   `json:"port,omitempty"`
	CertDir string `json:"certDir,omitempty"`
}

// LeaderElection configures leader election on a Lease.
type LeaderElection struct {
	LeaderElect       *bool            `json:"leaderElect,omitempty"`
	ResourceName      string           `json:"resourceName,omitempty"`
	ResourceNamespace string           `json:"resourceNamespace,omitempty"`
	ResourceLock      string           `json:"resourceLock,omitempty"`
	LeaseDuration     *metav1.Duration `json:"leaseDuration,omitempty"`
	RenewDeadline     *metav1.Duration `json:"renewDeadline,omitempty"`
	RetryPeriod       *metav1.Duration `json:"retryPeriod,omitempty"`
}

// Metrics configures the metrics endpoint.
type Metrics struct {
	// BindAddress of the endpoint; "0" disables it.
	BindAddress string `json:"bindAddress,omitempty"`
	// EnableClusterQueueResources is accepted for compatibility.
	EnableClusterQueueResources bool `json:"enableClusterQueueResources,omitempty"`
}

// Health configures the health probe endpoint.
type Health struct {
	HealthProbeBindAddress string `json:"healthProbeBindAddress,omitempty"`
	ReadinessEndpointName  string `json:"readinessEndpointName,omitempty"`
	LivenessEndpointName   string `json:"livenessEndpointName,omitempty"`
}

// FairSharing configures fair sharing between the queues of a cohort.
type FairSharing struct {
	Enable               bool     `json:"enable,omitempty"`
	PreemptionStrategies []string `json:"preemptionStrategies,omitempty"`
}
