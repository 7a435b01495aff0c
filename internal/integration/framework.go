package integration

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// Job is one object of a queued kind, as the framework drives it. Methods
// that change the job change the object in memory only: the framework
// writes it, once per step.
type Job interface {
	// Object is the wrapped object.
	Object() client.Object
	IsSuspended() bool
	Suspend()
	// PodSets are the Workload's pod sets, read from the job's spec.
	PodSets() ([]kueue.PodSet, error)
	// Originals captures what Run changes, so that Restore can undo it.
	Originals() []PodSetInfo
	// Run injects what admission decided and unsuspends.
	Run(infos []PodSetInfo) error
	// Restore puts the originals back and tells whether anything changed.
	Restore(originals []PodSetInfo) bool
	// Finished tells whether the job is done, whether it succeeded, and why.
	Finished() (done, succeeded bool, message string)
	// Active tells whether pods of the job may still be running (or its
	// controller has not yet caught up with a suspension).
	Active() bool
	// ReclaimablePods are pod-set slots whose pods are done for good while
	// the job still runs.
	ReclaimablePods() []kueue.ReclaimablePod
	// ManagedElsewhere names another controller that runs the job (a batch
	// Job's spec.managedBy), or is empty.
	ManagedElsewhere() string
}

// ReadyCounter is a Job that counts its pods that are ready or succeeded:
// its Workload's PodsReady condition says whether they reach the
// admitted count (waitForPodsReady).
type ReadyCounter interface {
	ReadyPods() int32
}

// StopsByDeletion is a Job that can't be suspended once it runs (a Pod):
// eviction deletes it, and its Workload finishes with it.
type StopsByDeletion interface {
	StopsByDeletion()
}

// Terminating is a Job being deleted that may still run for a while (a
// Pod in its grace period): its Workload keeps its reservation until
// Terminating says it no longer runs.
type Terminating interface {
	StillRunning() bool
}

// Kind is a queued kind: its framework name in the configuration, its
// GroupVersionKind, and how to make and wrap its objects.
type Kind struct {
	Framework string
	GVK       schema.GroupVersionKind
	NewObject func() client.Object
	NewList   func() client.ObjectList
	Wrap      func(client.Object) Job
	// Children are the kinds its controller creates whose pods the kind's
	// Workload counts (a JobSet's Jobs): only an object of one of these
	// kinds controlled by one of its objects is left to it. An owner
	// reference to any other queued kind (a Job naming a Job as its
	// controller) exempts nothing.
	Children []schema.GroupKind
	// ChildrenOfAnyKind: the kind's controller makes objects of whatever
	// kinds its jobs describe (an AppWrapper's components); Makes says
	// which.
	ChildrenOfAnyKind bool
	// Makes, when set, tells whether child, an object of one of Children
	// that names parent as its controller, is one the kind's controller
	// makes for parent, no larger than parent's Workload counts it (a
	// JobSet's Job is named for a replica of one of its replicated Jobs,
	// with that replicated Job's pods). An object that fails it is judged
	// as if it had no owner: naming a queued object as its controller
	// exempts nothing the object's Workload does not count. nil: its
	// controller's name for each child can't be told (a Pod's), and owning
	// is enough.
	Makes func(parent, child client.Object) bool
	// Remote, when set, lets MultiKueue dispatch the kind's jobs to worker
	// clusters.
	Remote RemoteAdapter
	// Finalizer, when set, is one the kind's webhook puts on its objects;
	// the framework removes it once the Workload no longer needs the object.
	Finalizer string
	// Decide, when set, replaces Policy.Decide in the reconciler: for kinds
	// whose webhook already made (and recorded) the decision.
	Decide func(obj client.Object) Placement
	// PodsGone, when set, tells whether the pods of a job that no longer
	// exists (or is being deleted) are gone, by the job's name and UID: a batch Job
	// deleted with orphan propagation leaves its pods running. Until they
	// are, its Workload keeps its reservation. nil: the kind's pods can't
	// outlive it.
	PodsGone func(ctx context.Context, reader client.Reader, namespace, name string, jobUID types.UID) (bool, error)
	// TrackingLabels, when set, are labels that select the kind's queued
	// objects into the manager's cache (Pods: only managed ones are
	// cached). An object that lost them but still holds the Finalizer is
	// still sluice's: the reconciler puts them back instead of taking it
	// for deleted.
	TrackingLabels map[string]string
	// Group, when set, makes each job a group of objects of the kind that
	// share one Workload (a pod group) rather than one object.
	Group *GroupShape
	// RunsAs, when set, is the kind of the one object the kind's controller
	// builds and runs each job as, named like the job and controlled by it
	// (a TrainJob's JobSet). Its Jobs are Resolvers that read their pod
	// sets from that object, the reconciler comes back to a job when it
	// changes, its own children are counted by the job, and its webhook
	// keeps it suspended unless the job's admission covers it.
	RunsAs *Kind
}

// Resolver is a Job whose pod sets are read from another object (a
// TrainJob's from the JobSet its controller builds): the reconciler has it
// read that object through the manager's cache before anything else.
type Resolver interface {
	Resolve(ctx context.Context, reader client.Reader) error
}

// ErrPodSetsNotBuilt: a Resolver's pod sets can't be read yet, because its
// controller has not built (or not yet rebuilt) the object they are read
// from. The job waits suspended, without a warning: that object's change
// brings the reconciler back.
var ErrPodSetsNotBuilt = errors.New("the object the job's pod sets are read from is not built yet")

// InjectsWhileSuspended is a Job whose controller takes what admission
// injects only while the job is suspended (a TrainJob's runtimePatches):
// its Run injects and leaves it suspended, and the reconciler writes that
// first and the Unsuspend after, in a second write.
type InjectsWhileSuspended interface {
	Unsuspend()
}

// Annotations sluice sets on the jobs it runs.
const (
	// OriginalPodSetsAnnotation holds the pod-set info a running job had
	// before admission's was injected, to restore on eviction.
	OriginalPodSetsAnnotation = "sluice.dev/original-pod-sets"
)

// Reasons of the Workload's Finished condition.
const (
	FinishedReasonSucceeded = "Succeeded"
	FinishedReasonFailed    = "Failed"
	// FinishedReasonEvicted: an object that stops by deletion was evicted.
	FinishedReasonEvicted = "Evicted"
	// FinishedReasonDeleted: the object was deleted before it ended.
	FinishedReasonDeleted = "Deleted"
	// FinishedReasonFailedToStart: the admission can't be applied to the
	// job (Kueue's reason), e.g. conflicting podSetUpdates.
	FinishedReasonFailedToStart = "FailedToStart"
)
