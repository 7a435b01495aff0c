// Package v1beta1 holds the Go types of kueue.x-k8s.io/v1beta1, the API
// version Kueue stored until 0.15, served next to v1beta2 so that a cluster
// switching from Kueue keeps its objects. It owns only what differs from
// v1beta2 (renamed and restructured fields) and the conversion to and from
// v1beta2, the storage version and the hub; everything else is v1beta2's
// types. It holds no behaviour.
//
// +kubebuilder:object:generate=true
// +groupName=kueue.x-k8s.io
package v1beta1
