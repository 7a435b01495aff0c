package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ResourceFlavorSpec describes a kind of node.
//
// +kubebuilder:validation:XValidation:rule="!has(self.topologyName) || (has(self.nodeLabels) && size(self.nodeLabels) >= 1)",message="topologyName requires at least one nodeLabel",fieldPath=".topologyName"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.topologyName) || (has(self.topologyName) && self.topologyName == oldSelf.topologyName)",message="topologyName is immutable once set",fieldPath=".topologyName"
type ResourceFlavorSpec struct {
	// nodeLabels are the labels of the nodes of this flavor; they are injected as
	// a nodeSelector into admitted pods.
	// +kubebuilder:validation:MaxProperties=8
	// +optional
	NodeLabels map[string]string `json:"nodeLabels,omitempty"`

	// nodeTaints are the taints of the nodes of this flavor. A workload whose
	// pods don't tolerate a NoSchedule or NoExecute taint can't use the flavor,
	// unless the flavor's own tolerations tolerate it.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:XValidation:rule="self.all(t, t.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])",message="supported taint effects are NoSchedule, PreferNoSchedule and NoExecute"
	// +optional
	NodeTaints []corev1.Taint `json:"nodeTaints,omitempty"`

	// tolerations are injected into the pods admitted in this flavor.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// topologyName names the Topology of this flavor's nodes (stored; used by
	// topology-aware scheduling in a later release).
	// +kubebuilder:validation:MaxLength=253
	// +optional
	TopologyName *string `json:"topologyName,omitempty"`
}

// ResourceFlavor is a kind of node (a GPU model, spot or on-demand capacity...)
// that ClusterQueues hold quota for.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName={rf,flavor,flavors}
// +kubebuilder:storageversion
type ResourceFlavor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec ResourceFlavorSpec `json:"spec,omitempty"`
}

// ResourceFlavorList is a list of ResourceFlavors.
//
// +kubebuilder:object:root=true
type ResourceFlavorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourceFlavor `json:"items"`
}

func init() {
	register(&ResourceFlavor{}, &ResourceFlavorList{})
}
