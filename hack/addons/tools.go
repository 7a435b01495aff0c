//go:build tools

// Package addons pins the other projects' controllers that `sluice dev
// --with` runs next to sluice: the JobSet controller (sigs.k8s.io/jobset)
// and the LeaderWorkerSet controller (sigs.k8s.io/lws), built from their
// published modules by `make addons`. It is a module apart because those
// projects build against older Kubernetes libraries than the control plane
// in hack/tools; nothing here is linked into sluice.
package addons

import (
	_ "sigs.k8s.io/jobset"
	_ "sigs.k8s.io/lws/cmd"
)
