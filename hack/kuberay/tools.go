//go:build tools

// Package kuberay pins KubeRay's operator (ray-operator): `make addons`
// builds it for `sluice dev --with ray` with its CustomResourceDefinitions.
// It is a module apart because KubeRay builds against other Kubernetes
// libraries than sluice and the control plane; nothing here is linked into
// sluice, whose Ray integration reads the same version's API types.
package kuberay

import (
	_ "github.com/ray-project/kuberay/ray-operator"
)
