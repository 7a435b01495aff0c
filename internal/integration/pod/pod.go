// Package pod is the plain Pod kind of the job framework: a Pod that sluice
// queues is created gated (scheduling gate kueue.x-k8s.io/admission),
// labelled kueue.x-k8s.io/managed and held by a finalizer; admission injects
// its flavor and removes the gate in one update; eviction deletes it. Pod
// groups are the same kind in the framework's group shape (groupKind). It
// also owns the owner walk of the standalone opt-in. It must not own the
// Workload lifecycle (internal/integration does, for groups too).
package pod

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
)

// PodSetName is the one pod set of a single Pod's Workload.
const PodSetName kueue.PodSetReference = "main"

// Kind is the plain Pod in the job framework. The webhook decides which Pods
// are queued and records it with the managed label; the reconciler follows
// that record.
var Kind = integration.Kind{
	Framework:      configapi.FrameworkPod,
	GVK:            corev1.SchemeGroupVersion.WithKind("Pod"),
	NewObject:      func() client.Object { return &corev1.Pod{} },
	NewList:        func() client.ObjectList { return &corev1.PodList{} },
	Wrap:           func(o client.Object) integration.Job { return &Pod{o.(*corev1.Pod)} },
	Finalizer:      kueue.ManagedLabel,
	TrackingLabels: map[string]string{kueue.ManagedLabel: "true"},
	// A Pod's Pods (a Spark driver's executors) are left to it unless they
	// opt in with standalone: Kueue's default, which the standalone spec
	// keeps.
	Children: []schema.GroupKind{{Kind: "Pod"}},
	Decide: func(o client.Object) integration.Placement {
		// Grouped Pods are the group kind's (groupKind).
		if o.GetLabels()[kueue.ManagedLabel] != "true" || o.GetLabels()[kueue.PodGroupNameLabel] != "" {
			return integration.Placement{}
		}
		return integration.Placement{Managed: true, QueueName: o.GetLabels()[kueue.QueueNameLabel]}
	},
}

// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;update;patch;delete

// Pod adapts a Pod to the framework.
type Pod struct{ *corev1.Pod }

func (p *Pod) Object() client.Object { return p.Pod }

// IsSuspended: a Pod waits while it carries sluice's scheduling gate.
func (p *Pod) IsSuspended() bool { return gated(p.Pod) }

// Suspend can't stop a running Pod; the framework deletes it instead
// (StopsByDeletion).
func (p *Pod) Suspend() {}

// StopsByDeletion marks Pods as stopped by deletion.
func (p *Pod) StopsByDeletion() {}

// PodSets is one podSet of one pod, the Pod's own spec without the gate.
func (p *Pod) PodSets() ([]kueue.PodSet, error) {
	tmpl := corev1.PodTemplateSpec{Spec: *p.Spec.DeepCopy()}
	tmpl.Spec.SchedulingGates = slices.DeleteFunc(tmpl.Spec.SchedulingGates, isAdmissionGate)
	tmpl.Spec.NodeName = ""
	return []kueue.PodSet{{Name: PodSetName, Count: 1, Template: tmpl}}, nil
}

// Originals: a Pod is never restored.
func (p *Pod) Originals() []integration.PodSetInfo { return nil }

// Run injects the flavor (allowed on a gated Pod) and removes the gate.
func (p *Pod) Run(infos []integration.PodSetInfo) error {
	if len(infos) != 1 {
		return fmt.Errorf("a Pod has one pod set, the admission has %d", len(infos))
	}
	tmpl := corev1.PodTemplateSpec{Spec: p.Spec}
	tmpl.Labels, tmpl.Annotations = p.Labels, p.Annotations
	if err := integration.Inject(&tmpl, infos[0]); err != nil {
		return err
	}
	p.Spec = tmpl.Spec
	p.Labels, p.Annotations = tmpl.Labels, tmpl.Annotations
	p.Spec.SchedulingGates = slices.DeleteFunc(p.Spec.SchedulingGates, isAdmissionGate)
	return nil
}

func (p *Pod) Restore([]integration.PodSetInfo) bool { return false }

func (p *Pod) Finished() (bool, bool, string) {
	switch p.Status.Phase {
	case corev1.PodSucceeded:
		return true, true, "Pod succeeded"
	case corev1.PodFailed:
		msg := "Pod failed"
		if p.Status.Message != "" {
			msg += ": " + p.Status.Message
		}
		return true, false, msg
	}
	return false, false, ""
}

// Active: a Pod that is not gated may run.
func (p *Pod) Active() bool { return !gated(p.Pod) }

func (p *Pod) ReclaimablePods() []kueue.ReclaimablePod { return nil }

// StillRunning: a Pod being deleted runs until its kubelet stops it and
// sets a terminal phase; one never bound to a node never runs (the
// scheduler doesn't bind a Pod being deleted).
func (p *Pod) StillRunning() bool {
	return p.Spec.NodeName != "" && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

func (p *Pod) ManagedElsewhere() string { return "" }

func gated(p *corev1.Pod) bool { return slices.ContainsFunc(p.Spec.SchedulingGates, isAdmissionGate) }

func isAdmissionGate(g corev1.PodSchedulingGate) bool { return g.Name == kueue.AdmissionSchedulingGate }

// ReadyPods is 1 for a Pod that is ready or succeeded.
func (p *Pod) ReadyPods() int32 { return readyPods(p.Pod) }

func readyPods(p *corev1.Pod) int32 {
	if p.Status.Phase == corev1.PodSucceeded {
		return 1
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return 1
		}
	}
	return 0
}
