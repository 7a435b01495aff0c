//go:build tools

// Package mpi pins Kubeflow's MPI operator: `make addons` builds it for
// `sluice dev --with mpi` with its CustomResourceDefinition. It is a
// module apart because the operator builds against other Kubernetes
// libraries than sluice and the control plane; nothing here is linked into
// sluice, whose MPIJob integration reads the same version's API types.
package mpi

import (
	_ "github.com/kubeflow/mpi-operator/cmd/mpi-operator"
)
