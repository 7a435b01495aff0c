package integration

import (
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// RemoteAdapter is what a job kind provides so that MultiKueue can
// dispatch its jobs to worker clusters. It is pure: the multikueue
// controller reads and writes the objects. A kind provides:
//   - which of its jobs are dispatched (their spec.managedBy names
//     MultiKueue: the kind's own controller must leave them alone in the
//     manager cluster, or they would run there too);
//   - the copy to create in a worker: the job as submitted (what admission
//     injected in the manager undone), suspended, without the fields its
//     controller generates, labelled with the prebuilt Workload's name and
//     the origin, and managed by the kind's own controller there;
//   - how the worker's status lands on the manager's job, and how that
//     status is cleared when the job stops in the manager.
type RemoteAdapter interface {
	// NewObject is an empty object of the kind (watched in the workers).
	NewObject() client.Object
	// NewList is an empty list of the kind.
	NewList() client.ObjectList
	// Dispatched tells whether a job is managed by MultiKueue.
	Dispatched(local client.Object) bool
	// RemoteCopy is the job to create in a worker.
	RemoteCopy(local client.Object, workloadName, origin string) (client.Object, error)
	// MirrorStatus sets local's status from remote's and tells whether it
	// changed.
	MirrorStatus(local, remote client.Object) bool
	// Final tells whether a job's status is final: nothing more will be
	// written to it (the manager keeps the worker's job until then, so
	// that the last of its status comes back).
	Final(obj client.Object) bool
	// ClearStatus resets what a suspended local job's status says of pods
	// that ran in a worker, and tells whether it changed.
	ClearStatus(local client.Object) bool
}
