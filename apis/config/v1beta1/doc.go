// Package v1beta1 is Kueue's older configuration file version
// (config.kueue.x-k8s.io/v1beta1): its types where they differ from
// v1beta2, and their conversion to v1beta2, which is the only version the
// manager reads. It must not default or validate; package config does,
// after conversion.
//
// +kubebuilder:object:generate=true
// +groupName=config.kueue.x-k8s.io
package v1beta1
