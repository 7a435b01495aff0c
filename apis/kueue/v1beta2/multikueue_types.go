package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// MultiKueueControllerName is the controllerName of the MultiKueue
	// admission check, and the spec.managedBy of the jobs it dispatches.
	MultiKueueControllerName = "kueue.x-k8s.io/multikueue"

	// MultiKueueClusterActive is the condition telling a worker is usable.
	MultiKueueClusterActive = "Active"

	// MultiKueueOriginLabel marks the objects a manager made in a worker
	// with the manager's origin (the configuration's multiKueue.origin).
	MultiKueueOriginLabel = "kueue.x-k8s.io/multikueue-origin"

	// MultiKueueOriginUIDAnnotation holds, on a remote object, the UID of
	// the manager's object it copies.
	MultiKueueOriginUIDAnnotation = "kueue.x-k8s.io/multikueue-origin-uid"
)

// LocationType: where a worker cluster's kubeconfig is.
type LocationType string

// The kubeconfig locations.
const (
	PathLocationType   LocationType = "Path"
	SecretLocationType LocationType = "Secret"
)

// KubeConfig locates a worker cluster's kubeconfig.
type KubeConfig struct {
	// location: a Secret's name in the manager's namespace, or a path.
	// +required
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:MinLength=1
	Location string `json:"location"`

	// locationType: Secret (default) or Path.
	// +optional
	// +kubebuilder:default=Secret
	// +kubebuilder:validation:Enum=Secret;Path
	LocationType LocationType `json:"locationType,omitempty"`
}

// MultiKueueClusterSpec says how to reach a worker cluster.
type MultiKueueClusterSpec struct {
	// clusterSource: a kubeconfig or a ClusterProfile.
	// +required
	ClusterSource ClusterSource `json:"clusterSource,omitempty"`
}

// ClusterSource is exactly one way to reach a cluster.
// +kubebuilder:validation:ExactlyOneOf=kubeConfig;clusterProfileRef
type ClusterSource struct {
	// kubeConfig of the worker cluster.
	// +optional
	KubeConfig *KubeConfig `json:"kubeConfig,omitempty,omitzero"`

	// clusterProfileRef names a ClusterProfile.
	// +optional
	ClusterProfileRef *ClusterProfileReference `json:"clusterProfileRef,omitempty"`
}

// ClusterProfileReference names a ClusterProfile.
type ClusterProfileReference struct {
	// name of the ClusterProfile.
	// +required
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name,omitempty"`
}

// MultiKueueClusterStatus reports the connection.
type MultiKueueClusterStatus struct {
	// conditions; Active tells the cluster is connected.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// MultiKueueCluster is a worker cluster of MultiKueue: how the manager
// cluster reaches it.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName={mkc}
// +kubebuilder:printcolumn:name="Connected",JSONPath=".status.conditions[?(@.type=='Active')].status",type="string",description="MultiKueueCluster is connected"
// +kubebuilder:printcolumn:name="Age",JSONPath=".metadata.creationTimestamp",type="date",description="Time this workload was created"
type MultiKueueCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MultiKueueClusterSpec   `json:"spec,omitempty,omitzero"`
	Status MultiKueueClusterStatus `json:"status,omitempty"`
}

// MultiKueueClusterList is a list of MultiKueueClusters.
//
// +kubebuilder:object:root=true
type MultiKueueClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MultiKueueCluster `json:"items"`
}

// MultiKueueConfigQuotaManagementMode: who keeps worker quotas in step.
// +kubebuilder:validation:Enum=Manual;Automated
type MultiKueueConfigQuotaManagementMode string

// The quota management modes.
const (
	QuotaManagementManual    MultiKueueConfigQuotaManagementMode = "Manual"
	QuotaManagementAutomated MultiKueueConfigQuotaManagementMode = "Automated"
)

// MultiKueueConfigSpec lists the worker clusters of a MultiKueue check.
type MultiKueueConfigSpec struct {
	// clusters: names of MultiKueueClusters.
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="size(self.filter(i, size(self.filter(j, j == i)) > 1)) == 0",message="must be unique"
	Clusters []string `json:"clusters,omitempty,omitzero"`

	// quotaManagement: Manual or Automated.
	// +optional
	QuotaManagement *MultiKueueConfigQuotaManagementMode `json:"quotaManagement,omitempty"`
}

// MultiKueueConfig holds the settings of a MultiKueue admission check.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:scope=Cluster,shortName={mkconf}
type MultiKueueConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec MultiKueueConfigSpec `json:"spec,omitempty"`
}

// MultiKueueConfigList is a list of MultiKueueConfigs.
//
// +kubebuilder:object:root=true
type MultiKueueConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MultiKueueConfig `json:"items"`
}

func init() {
	register(&MultiKueueCluster{}, &MultiKueueClusterList{}, &MultiKueueConfig{}, &MultiKueueConfigList{})
}
