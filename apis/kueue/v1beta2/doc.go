// Package v1beta2 holds the Go types of the kueue.x-k8s.io/v1beta2 API that sluice
// serves (the contract in shared/spec/api.md). It owns field names, schema markers
// (validation, defaults, CEL rules, printer columns) and the well-known labels,
// condition types and reasons. It holds no behaviour: validation that CEL can't
// express lives in internal/webhook, semantics in internal/quota and beyond.
//
// +kubebuilder:object:generate=true
// +groupName=kueue.x-k8s.io
package v1beta2
