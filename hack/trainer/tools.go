//go:build tools

// Package trainer pins the Kubeflow trainer (v2): `make addons` builds its
// controller for `sluice dev --with trainer`, and the integration tests
// install its CustomResourceDefinitions from this module's copy. It is a
// module apart because the trainer builds against other Kubernetes
// libraries than sluice and the control plane; nothing here is linked into
// sluice.
package trainer

import (
	_ "github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager"
)
