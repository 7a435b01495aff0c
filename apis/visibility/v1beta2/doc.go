// Package v1beta2 holds the Go types of visibility.kueue.x-k8s.io/v1beta2,
// the read-only API of pending workloads that sluice's visibility server
// serves as Kueue does (same kinds, fields and query options). It holds
// no behaviour: the server is internal/visibility.
//
// +kubebuilder:object:generate=true
// +k8s:openapi-gen=true
// +groupName=visibility.kueue.x-k8s.io
package v1beta2
