package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ProvisioningRequestControllerName is the controllerName of the built-in
// ProvisioningRequest admission check (internal/controller/provisioning).
const ProvisioningRequestControllerName = "kueue.x-k8s.io/provisioning-request"

// ProvisioningRequestConfigPodSetMergePolicy: which podSets share a
// PodTemplate in the ProvisioningRequest.
type ProvisioningRequestConfigPodSetMergePolicy string

// The podSet merge policies.
const (
	IdenticalWorkloadSchedulingRequirements ProvisioningRequestConfigPodSetMergePolicy = "IdenticalWorkloadSchedulingRequirements"
	IdenticalPodTemplates                   ProvisioningRequestConfigPodSetMergePolicy = "IdenticalPodTemplates"
)

// ProvisioningRequestConfigSpec configures the ProvisioningRequests made
// for an admission check.
type ProvisioningRequestConfigSpec struct {
	// provisioningClassName of the ProvisioningRequests.
	// +required
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:MinLength=1
	ProvisioningClassName string `json:"provisioningClassName,omitempty"`

	// parameters passed to the provisioning class.
	// +optional
	// +kubebuilder:validation:MaxProperties=100
	Parameters map[string]Parameter `json:"parameters,omitempty"`

	// managedResources: only podSets requesting these are provisioned
	// (all when empty).
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=100
	ManagedResources []corev1.ResourceName `json:"managedResources,omitempty"`

	// retryStrategy for failed or expired requests.
	// +optional
	// +kubebuilder:default={backoffLimitCount:3,backoffBaseSeconds:60,backoffMaxSeconds:1800}
	RetryStrategy *ProvisioningRequestRetryStrategy `json:"retryStrategy,omitempty"`

	// podSetUpdates applied to the admitted podSets.
	// +optional
	PodSetUpdates *ProvisioningRequestPodSetUpdates `json:"podSetUpdates,omitempty"`

	// podSetMergePolicy merges podSets into one PodTemplate.
	// +optional
	// +kubebuilder:validation:Enum=IdenticalPodTemplates;IdenticalWorkloadSchedulingRequirements
	PodSetMergePolicy *ProvisioningRequestConfigPodSetMergePolicy `json:"podSetMergePolicy,omitempty"`
}

// ProvisioningRequestPodSetUpdates: what is added to the podSets.
type ProvisioningRequestPodSetUpdates struct {
	// nodeSelector entries, with values from the provisioning class.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MaxItems=8
	NodeSelector []ProvisioningRequestPodSetUpdatesNodeSelector `json:"nodeSelector,omitempty"`
}

// ProvisioningRequestPodSetUpdatesNodeSelector is one node selector entry.
type ProvisioningRequestPodSetUpdatesNodeSelector struct {
	// key of the node selector.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$`
	Key string `json:"key,omitempty"`

	// valueFromProvisioningClassDetail names the detail that holds the
	// value.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32768
	ValueFromProvisioningClassDetail string `json:"valueFromProvisioningClassDetail,omitempty"`
}

// ProvisioningRequestRetryStrategy: how often and how soon a request is
// retried.
type ProvisioningRequestRetryStrategy struct {
	// backoffLimitCount: retries before the workload is deactivated.
	// +optional
	// +kubebuilder:default=3
	BackoffLimitCount *int32 `json:"backoffLimitCount,omitempty"`

	// backoffBaseSeconds: the first backoff.
	// +optional
	// +kubebuilder:default=60
	BackoffBaseSeconds *int32 `json:"backoffBaseSeconds,omitempty"`

	// backoffMaxSeconds: the longest backoff.
	// +optional
	// +kubebuilder:default=1800
	BackoffMaxSeconds *int32 `json:"backoffMaxSeconds,omitempty"`
}

// Parameter is a value passed to the provisioning class.
// +kubebuilder:validation:MaxLength=255
type Parameter string

// ProvisioningRequestConfig holds the settings of a ProvisioningRequest
// admission check.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:scope=Cluster,shortName={prc}
type ProvisioningRequestConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ProvisioningRequestConfigSpec `json:"spec"`
}

// ProvisioningRequestConfigList is a list of ProvisioningRequestConfigs.
//
// +kubebuilder:object:root=true
type ProvisioningRequestConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ProvisioningRequestConfig `json:"items"`
}

func init() {
	register(&ProvisioningRequestConfig{}, &ProvisioningRequestConfigList{})
}
