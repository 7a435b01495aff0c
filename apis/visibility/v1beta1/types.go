package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// ClusterQueue is the parent of clusterqueues/{name}/pendingworkloads;
// only the subresource is served.
//
// +kubebuilder:object:root=true
type ClusterQueue struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Summary PendingWorkloadsSummary `json:"pendingWorkloadsSummary"`
}

// ClusterQueueList is a list of ClusterQueue.
//
// +kubebuilder:object:root=true
type ClusterQueueList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []ClusterQueue `json:"items"`
}

// LocalQueue is the parent of
// namespaces/{ns}/localqueues/{name}/pendingworkloads; only the
// subresource is served.
//
// +kubebuilder:object:root=true
type LocalQueue struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Summary PendingWorkloadsSummary `json:"pendingWorkloadsSummary"`
}

// LocalQueueList is a list of LocalQueue.
//
// +kubebuilder:object:root=true
type LocalQueueList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []LocalQueue `json:"items"`
}

// PendingWorkload is one waiting workload and where it stands.
type PendingWorkload struct {
	// Name, namespace, creation time and owners of the Workload.
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Priority is the workload's priority.
	Priority int32 `json:"priority"`

	// LocalQueueName is the LocalQueue the workload was submitted to.
	LocalQueueName kueue.LocalQueueName `json:"localQueueName"`

	// PositionInClusterQueue is the workload's place, from 0, in the order
	// its ClusterQueue is served.
	PositionInClusterQueue int32 `json:"positionInClusterQueue"`

	// PositionInLocalQueue is its place, from 0, among the workloads of its
	// LocalQueue in that order.
	PositionInLocalQueue int32 `json:"positionInLocalQueue"`

	// Reason and Message say why the workload waits, with sluice's numbers
	// (its QuotaReserved=False condition); empty until sluice has written
	// one. sluice only: Kueue's clients ignore them.
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// PendingWorkloadsSummary is a page of the pending workloads of a
// ClusterQueue or LocalQueue, in order.
//
// +kubebuilder:object:root=true
type PendingWorkloadsSummary struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Items []PendingWorkload `json:"items"`
}

// PendingWorkloadOptions are the query parameters of a pendingworkloads
// request.
//
// +kubebuilder:object:root=true
type PendingWorkloadOptions struct {
	metav1.TypeMeta `json:",inline"`

	// Offset is the position of the first workload returned, from 0.
	Offset int64 `json:"offset"`

	// Limit is how many workloads at most are returned; 1000 by default.
	Limit int64 `json:"limit,omitempty"`
}
