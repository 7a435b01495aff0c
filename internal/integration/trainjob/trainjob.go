// Package trainjob is Kubeflow Trainer's TrainJob
// (trainer.kubeflow.org/v1alpha1) in the job framework. A TrainJob runs as
// the JobSet the trainer builds for it from its training runtime (same
// name, controlled by it): its pod sets are that JobSet's, read once the
// trainer has built it, so that sluice counts exactly what the trainer
// runs rather than guessing it from the runtime. It is suspended through
// spec.suspend, and admission reaches the JobSet's pod templates through a
// runtime patch of sluice's (manager kueue.x-k8s.io/manager, as Kueue
// names it), written while the TrainJob is still suspended (the trainer
// takes runtime patches only then) and taken off once it stopped.
//
// TrainJobs are handled as unstructured objects: the trainer's Go module
// (v2.2) does not compile against the Kubernetes libraries sluice is built
// with, and an unstructured object keeps every field sluice does not read
// when it writes the TrainJob back.
//
// It must not own the Workload lifecycle (internal/integration does), nor
// the JobSet's pod sets (internal/integration/jobset reads them).
package trainjob

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
	"github.com/sluicehq/sluice/internal/integration/jobset"
)

// +kubebuilder:rbac:groups=trainer.kubeflow.org,resources=trainjobs,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=trainer.kubeflow.org,resources=trainjobs/status,verbs=get

// GVK is the TrainJob's kind.
var GVK = schema.GroupVersionKind{Group: "trainer.kubeflow.org", Version: "v1alpha1", Kind: "TrainJob"}

// The trainer's names sluice reads and writes.
const (
	// trainerController is the managedBy value of the TrainJobs the
	// trainer runs itself.
	trainerController = "trainer.kubeflow.org/trainjob-controller"
	// conditionComplete and conditionFailed end a TrainJob.
	conditionComplete = "Complete"
	conditionFailed   = "Failed"
)

// Kind is the TrainJob in the job framework.
var Kind = integration.Kind{
	Framework: configapi.FrameworkTrainJob,
	GVK:       GVK,
	NewObject: func() client.Object { return newObject() },
	NewList: func() client.ObjectList {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(GVK.GroupVersion().WithKind(GVK.Kind + "List"))
		return list
	},
	Wrap:     func(o client.Object) integration.Job { return &TrainJob{Unstructured: o.(*unstructured.Unstructured)} },
	Children: []schema.GroupKind{jobset.Kind.GVK.GroupKind()},
	RunsAs:   &jobset.Kind,
	// The trainer names the JobSet it runs a TrainJob as after it; what
	// the JobSet may run, its webhook guards (RunsAs).
	Makes: func(parent, child client.Object) bool { return child.GetName() == parent.GetName() },
	PodsGone: func(ctx context.Context, reader client.Reader, namespace, name string, _ types.UID) (bool, error) {
		// A TrainJob deleted with orphan propagation leaves its JobSet
		// running, named like it; the JobSet controller labels its
		// pods with that name.
		return integration.PodsGoneByLabel(ctx, reader, namespace, jobsetapi.JobSetNameKey, name)
	},
}

func newObject() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(GVK)
	return u
}

// Registration is the TrainJob in the list of kinds. It is set up once the
// cluster serves TrainJobs and JobSets (what they run as).
var Registration = integration.JobRegistration(&Kind, "trainjobs.trainer.kubeflow.org", func(deps integration.Deps) func(ctrl.Manager) error {
	return newWebhook(deps).Register
})

// TrainJob adapts a TrainJob to the framework.
type TrainJob struct {
	*unstructured.Unstructured
	// jobSet is the JobSet the trainer built for it (Resolve), or nil.
	jobSet *jobsetapi.JobSet
}

var (
	_ integration.Resolver              = (*TrainJob)(nil)
	_ integration.InjectsWhileSuspended = (*TrainJob)(nil)
	_ integration.ReadyCounter          = (*TrainJob)(nil)
)

func (t *TrainJob) Object() client.Object { return t.Unstructured }

// Resolve reads the JobSet the trainer built for the TrainJob: named like
// it and controlled by it. Another JobSet of that name is not its.
func (t *TrainJob) Resolve(ctx context.Context, reader client.Reader) error {
	t.jobSet = nil
	js := &jobsetapi.JobSet{}
	if err := reader.Get(ctx, client.ObjectKey{Namespace: t.GetNamespace(), Name: t.GetName()}, js); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading the JobSet of TrainJob %s/%s: %w", t.GetNamespace(), t.GetName(), err)
	}
	if owner := metav1.GetControllerOf(js); owner != nil && owner.UID == t.GetUID() {
		t.jobSet = js
	}
	return nil
}

func (t *TrainJob) IsSuspended() bool {
	suspended, _, _ := unstructured.NestedBool(t.Unstructured.Object, "spec", "suspend")
	return suspended
}

func (t *TrainJob) Suspend() { t.setSuspend(true) }

func (t *TrainJob) Unsuspend() { t.setSuspend(false) }

func (t *TrainJob) setSuspend(suspend bool) {
	// spec is an object in every TrainJob the API server serves (runtimeRef
	// is required), so setting a field in it can't fail.
	_ = unstructured.SetNestedField(t.Unstructured.Object, suspend, "spec", "suspend")
}

// PodSets are the pod sets of the JobSet the trainer built: one per
// replicated Job. While the TrainJob has no admission injected, a JobSet
// that still carries the last one is one the trainer has not rebuilt yet,
// and says nothing of the next run.
func (t *TrainJob) PodSets() ([]kueue.PodSet, error) {
	if t.jobSet == nil {
		return nil, fmt.Errorf("%w: the trainer has not created JobSet %s for the TrainJob yet", integration.ErrPodSetsNotBuilt, t.GetName())
	}
	if !hasAdmission(t.Unstructured) && carriesAdmission(t.jobSet) {
		return nil, fmt.Errorf("%w: JobSet %s still runs with what the last admission injected; the trainer has not rebuilt it yet", integration.ErrPodSetsNotBuilt, t.GetName())
	}
	podSets, errs := jobset.PodSets(t.jobSet)
	if len(errs) > 0 {
		return nil, fmt.Errorf("JobSet %s, which the trainer built for the TrainJob: %w", t.GetName(), errs.ToAggregate())
	}
	return podSets, nil
}

// carriesAdmission tells whether a pod template of the JobSet was built
// with an admission injected.
func carriesAdmission(js *jobsetapi.JobSet) bool {
	for i := range js.Spec.ReplicatedJobs {
		if _, ok := js.Spec.ReplicatedJobs[i].Template.Spec.Template.Annotations[admittedAnnotation]; ok {
			return true
		}
	}
	return false
}

// Originals: what Run changes is sluice's runtime patch alone, which
// Restore puts back at rest; there is nothing per pod set to remember (an
// empty list, not nil: the TrainJob is restored, not deleted).
func (t *TrainJob) Originals() []integration.PodSetInfo { return []integration.PodSetInfo{} }

// Run puts admission into sluice's runtime patch, one replicated Job patch
// per pod set; the TrainJob stays suspended (InjectsWhileSuspended).
func (t *TrainJob) Run(infos []integration.PodSetInfo) error {
	return setSluicePatch(t.Unstructured, infos)
}

// Restore takes admission out of sluice's runtime patch.
func (t *TrainJob) Restore([]integration.PodSetInfo) bool {
	return restSluicePatch(t.Unstructured)
}

// conditions are the TrainJob's status conditions; ones that don't decode
// are left out.
func (t *TrainJob) conditions() []metav1.Condition {
	raw, _, _ := unstructured.NestedSlice(t.Unstructured.Object, "status", "conditions")
	var out []metav1.Condition
	for _, item := range raw {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		var c metav1.Condition
		if runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c) == nil {
			out = append(out, c)
		}
	}
	return out
}

// Finished reads the trainer's Complete and Failed conditions.
func (t *TrainJob) Finished() (bool, bool, string) {
	conditions := t.conditions()
	if c := meta.FindStatusCondition(conditions, conditionComplete); c != nil && c.Status == metav1.ConditionTrue {
		return true, true, integration.MessageOr(c.Message, "TrainJob completed")
	}
	if c := meta.FindStatusCondition(conditions, conditionFailed); c != nil && c.Status == metav1.ConditionTrue {
		return true, false, integration.MessageOr(c.Message, "TrainJob failed")
	}
	return false, false, ""
}

// Active: its JobSet runs or still has active Jobs, or the trainer's status
// still counts active Jobs.
func (t *TrainJob) Active() bool {
	if js := t.jobSet; js != nil && (!ptr.Deref(js.Spec.Suspend, false) || (&jobset.JobSet{JobSet: js}).Active()) {
		return true
	}
	statuses, _, _ := unstructured.NestedSlice(t.Unstructured.Object, "status", "jobsStatus")
	for _, item := range statuses {
		if m, ok := item.(map[string]any); ok {
			if active, _, _ := unstructured.NestedInt64(m, "active"); active > 0 {
				return true
			}
		}
	}
	return false
}

// ReclaimablePods are its JobSet's.
func (t *TrainJob) ReclaimablePods() []kueue.ReclaimablePod {
	if t.jobSet == nil {
		return nil
	}
	return (&jobset.JobSet{JobSet: t.jobSet}).ReclaimablePods()
}

// ReadyPods are its JobSet's.
func (t *TrainJob) ReadyPods() int32 {
	if t.jobSet == nil {
		return 0
	}
	return (&jobset.JobSet{JobSet: t.jobSet}).ReadyPods()
}

// ManagedElsewhere names a controller other than the trainer (MultiKueue's
// is sluice's own, and dispatches no TrainJob yet: the MultiKueue check
// rejects its Workload).
func (t *TrainJob) ManagedElsewhere() string {
	by, _, _ := unstructured.NestedString(t.Unstructured.Object, "spec", "managedBy")
	if by == "" || by == trainerController || by == kueue.MultiKueueControllerName {
		return ""
	}
	return by
}
