// Package tools pins the upstream Kubernetes components (kube-apiserver, etcd,
// kubectl, kube-controller-manager, kube-scheduler, kwok) that `make tools`
// builds into bin/k8s. Nothing in sluice imports it.
package tools
