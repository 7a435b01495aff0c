package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sluicehq/sluice/apis/config/v1beta2"
)

// Version of the configuration file.
const Version = "v1beta1"

// Configuration is a v1beta1 file. The fields that did not change between
// the versions share v1beta2's types; the ones that did are below.
//
// +kubebuilder:object:root=true
type Configuration struct {
	metav1.TypeMeta `json:",inline"`

	Namespace                    *string `json:"namespace,omitempty"`
	v1beta2.ControllerManager    `json:",inline"`
	ManageJobsWithoutQueueName   bool                            `json:"manageJobsWithoutQueueName"`
	ManagedJobsNamespaceSelector *metav1.LabelSelector           `json:"managedJobsNamespaceSelector,omitempty"`
	InternalCertManagement       *v1beta2.InternalCertManagement `json:"internalCertManagement,omitempty"`
	// WaitForPodsReady is on only with enable: true.
	WaitForPodsReady *WaitForPodsReady         `json:"waitForPodsReady,omitempty"`
	ClientConnection *v1beta2.ClientConnection `json:"clientConnection,omitempty"`
	Integrations     *Integrations             `json:"integrations,omitempty"`
	// QueueVisibility was replaced by the visibility API; it is accepted
	// and dropped.
	QueueVisibility *QueueVisibility    `json:"queueVisibility,omitempty"`
	MultiKueue      *v1beta2.MultiKueue `json:"multiKueue,omitempty"`
	// FairSharing is on only with enable: true.
	FairSharing             *FairSharing                     `json:"fairSharing,omitempty"`
	AdmissionFairSharing    *v1beta2.AdmissionFairSharing    `json:"admissionFairSharing,omitempty"`
	Resources               *v1beta2.Resources               `json:"resources,omitempty"`
	FeatureGates            map[string]bool                  `json:"featureGates,omitempty"`
	ObjectRetentionPolicies *v1beta2.ObjectRetentionPolicies `json:"objectRetentionPolicies,omitempty"`
}

// WaitForPodsReady of v1beta1: off unless Enable.
type WaitForPodsReady struct {
	Enable            bool                       `json:"enable,omitempty"`
	Timeout           *metav1.Duration           `json:"timeout,omitempty"`
	BlockAdmission    *bool                      `json:"blockAdmission,omitempty"`
	RequeuingStrategy *v1beta2.RequeuingStrategy `json:"requeuingStrategy,omitempty"`
	RecoveryTimeout   *metav1.Duration           `json:"recoveryTimeout,omitempty"`
}

// Integrations of v1beta1, with the pod options v1beta2 dropped (the
// managedJobsNamespaceSelector replaced them).
type Integrations struct {
	Frameworks         []string               `json:"frameworks,omitempty"`
	ExternalFrameworks []string               `json:"externalFrameworks,omitempty"`
	PodOptions         *PodIntegrationOptions `json:"podOptions,omitempty"`
	LabelKeysToCopy    []string               `json:"labelKeysToCopy,omitempty"`
}

// PodIntegrationOptions limited the pod integration (deprecated in Kueue).
type PodIntegrationOptions struct {
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
	PodSelector       *metav1.LabelSelector `json:"podSelector,omitempty"`
}

// QueueVisibility of v1beta1 (removed in v1beta2).
type QueueVisibility struct {
	ClusterQueues         *ClusterQueueVisibility `json:"clusterQueues,omitempty"`
	UpdateIntervalSeconds int32                   `json:"updateIntervalSeconds,omitempty"`
}

// ClusterQueueVisibility of v1beta1.
type ClusterQueueVisibility struct {
	MaxCount int32 `json:"maxCount,omitempty"`
}

// FairSharing of v1beta1: off unless Enable.
type FairSharing struct {
	Enable               bool                         `json:"enable"`
	PreemptionStrategies []v1beta2.PreemptionStrategy `json:"preemptionStrategies,omitempty"`
}
