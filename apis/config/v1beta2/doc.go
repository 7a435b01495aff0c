// Package v1beta2 is the manager's configuration file (kind Configuration,
// group config.kueue.x-k8s.io): its types, defaults, strict loading and
// validation. It must not start anything; internal/manager turns a loaded
// Configuration into a running manager.
//
// +kubebuilder:object:generate=true
// +groupName=config.kueue.x-k8s.io
package v1beta2
