package integration

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Registration is everything sluice knows about one kind, in one value: the
// manager, the standalone owner walk and the configuration's framework
// check all read the list of them (internal/integration/kinds) rather than
// naming kinds themselves.
type Registration struct {
	// Framework is the kind's name in integrations.frameworks.
	Framework string
	// GVK is the kind as its owner references name it.
	GVK schema.GroupVersionKind
	// NewObject makes an empty object of the kind, to read it as an owner.
	NewObject func() client.Object
	// CRD names the CustomResourceDefinition that serves the kind; empty
	// for built-in kinds. An enabled kind the cluster does not serve yet is
	// set up once its CustomResourceDefinition appears.
	CRD string
	// Queued, when set, is the kind as the generic Reconciler drives it;
	// nil for kinds queued through their Pods (Deployments, StatefulSets).
	Queued *Kind
	// New builds the kind's setup from what the manager provides.
	New func(Deps) Setup
	// GroupPods, when set, puts a Pod of the kind's (one its webhook sent
	// to the pod integration) into its pod group: a kind whose pod
	// templates are shared by several groups (a LeaderWorkerSet's) names
	// the group from the Pod's own labels. It runs in the pod webhook on
	// every queued Pod and leaves the Pods of other kinds alone.
	GroupPods func(*corev1.Pod)
	// GroupSize, when set, reads how many Pods the pod group of a Pod of
	// the kind should have from the kind's object (a StatefulSet's
	// replicas: scaling doesn't touch the pod template); false when the Pod
	// is not the kind's. Without it, the group's total-count annotation
	// says.
	GroupSize GroupSizer
	// ThroughPods: the kind is queued through its Pods (its webhook sends
	// its pod templates to the pod integration). Enabling it enables the
	// pod integration for those Pods, even when integrations.frameworks
	// leaves "pod" out: otherwise they would run unqueued.
	ThroughPods bool
	// QueuedThrough, when set, is the framework of the kind this kind's
	// controller creates, which sluice queues instead (a RayService's
	// RayClusters); the configuration refuses this kind without it. Such a
	// kind's webhook only validates: it changes nothing.
	QueuedThrough string
}

// GroupSizer reads the size of a Pod's group from the object of the kind
// that made the Pod; false: the Pod is not that kind's.
type GroupSizer func(ctx context.Context, reader client.Reader, p *corev1.Pod) (size int, ok bool, err error)

// Deps is what the manager gives a kind's setup.
type Deps struct {
	// Enabled: the configuration names the kind's framework. A disabled
	// kind's webhook is still served (the webhook configuration is static)
	// and lets everything through.
	Enabled bool
	Policy  *Policy
	// Client writes; Reader reads the manager's cache; APIReader reads the
	// API server (owners, priority classes).
	Client client.Client
	Reader client.Reader
	// Workloads writes Workload status, in order with sluice's admission
	// writes.
	Workloads WorkloadStatusWriter
	APIReader client.Reader
	Clock     clock.Clock
	// LabelKeysToCopy are the job labels its Workload gets.
	LabelKeysToCopy []string
	// MultiKueue: jobs sent to a MultiKueue ClusterQueue are dispatched.
	MultiKueue bool
	// KnownOwners are the kinds the standalone owner walk follows (every
	// registered kind, enabled or not), with how to read each.
	KnownOwners map[schema.GroupKind]func() client.Object
	// PodGroupers are the enabled kinds' GroupPods.
	PodGroupers []func(*corev1.Pod)
	// PodGroupSizers are every registered kind's GroupSize.
	PodGroupSizers []GroupSizer
	// ParentsPodsOnly: the pod integration is enabled only for the Pods
	// of kinds queued through their Pods ("pod" itself is not in
	// integrations.frameworks); plain Pods are let through.
	ParentsPodsOnly bool
	// Self is the user name the API server knows the manager by: writes
	// that are sluice's alone (taking a Pod's admission gate off) are
	// refused from anyone else.
	Self string
}

// Setup is a kind's webhook registration; a kind with controllers of its
// own beyond the generic Reconciler implements ControllerSetup too.
type Setup interface {
	SetupWebhook(mgr ctrl.Manager) error
}

// ControllerSetup is a Setup with controllers of its own (the pod
// integration's notices and groups), set up when the kind is enabled.
type ControllerSetup interface {
	SetupControllers(ctx context.Context, mgr ctrl.Manager) error
}

// SetupFunc adapts a function to Setup.
type SetupFunc func(mgr ctrl.Manager) error

func (f SetupFunc) SetupWebhook(mgr ctrl.Manager) error { return f(mgr) }

// JobRegistration is the Registration of a queued kind whose setup is its
// webhook: crd names its CustomResourceDefinition ("" for built-ins).
func JobRegistration(kind *Kind, crd string, webhook func(Deps) func(ctrl.Manager) error) Registration {
	return Registration{
		Framework: kind.Framework,
		GVK:       kind.GVK,
		NewObject: kind.NewObject,
		CRD:       crd,
		Queued:    kind,
		New:       func(deps Deps) Setup { return SetupFunc(webhook(deps)) },
	}
}
