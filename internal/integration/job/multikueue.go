package job

import (
	"fmt"
	"maps"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
)

// RemoteAdapter dispatches batch Jobs with MultiKueue.
type RemoteAdapter struct{}

var _ integration.RemoteAdapter = RemoteAdapter{}

func (RemoteAdapter) NewObject() client.Object { return &batchv1.Job{} }

func (RemoteAdapter) NewList() client.ObjectList { return &batchv1.JobList{} }

func (RemoteAdapter) Dispatched(local client.Object) bool {
	j, ok := local.(*batchv1.Job)
	return ok && ptr.Deref(j.Spec.ManagedBy, "") == kueue.MultiKueueControllerName
}

// generatedTemplateLabels are put on a Job's pod template by the API
// server from the Job's UID and name; a copy created elsewhere gets its
// own.
var generatedTemplateLabels = []string{batchv1.ControllerUidLabel, batchv1.JobNameLabel, "controller-uid", "job-name"}

// RemoteCopy is the Job as submitted, suspended and run by the worker's
// Job controller, queued there by the prebuilt Workload.
func (RemoteAdapter) RemoteCopy(local client.Object, workloadName, origin string) (client.Object, error) {
	src, ok := local.(*batchv1.Job)
	if !ok {
		return nil, fmt.Errorf("%T is not a batch Job", local)
	}
	j := &Job{src.DeepCopy()}
	originals, err := integration.OriginalsOf(j.Job)
	if err != nil {
		return nil, err
	}
	if originals != nil {
		j.Restore(originals)
	}
	labels := maps.Clone(src.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[kueue.PrebuiltWorkloadLabel] = workloadName
	labels[kueue.MultiKueueOriginLabel] = origin
	annotations := maps.Clone(src.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	delete(annotations, integration.OriginalPodSetsAnnotation)
	annotations[kueue.MultiKueueOriginUIDAnnotation] = string(src.UID)
	remote := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: src.Namespace, Name: src.Name, Labels: labels, Annotations: annotations},
		Spec:       j.Spec,
	}
	remote.Spec.Selector = nil
	remote.Spec.ManagedBy = nil
	remote.Spec.Suspend = ptr.To(true)
	for _, l := range generatedTemplateLabels {
		delete(remote.Spec.Template.Labels, l)
	}
	return remote, nil
}

// MirrorStatus copies the worker's status once the local Job runs (is
// admitted), or once the worker's Job finished. A suspended local Job
// keeps its own meanwhile: a startTime on it would freeze its template,
// which admission still has to write.
func (RemoteAdapter) MirrorStatus(local, remote client.Object) bool {
	l, r := local.(*batchv1.Job), remote.(*batchv1.Job)
	if ptr.Deref(l.Spec.Suspend, false) {
		if done, _, _ := (&Job{r}).Finished(); !done {
			return false
		}
	}
	if apiequality.Semantic.DeepEqual(l.Status, r.Status) {
		return false
	}
	l.Status = *r.Status.DeepCopy()
	return true
}

// ClearStatus forgets the pods of a worker: the stopped local Job has
// none running, and no start time, so that its template can be restored.
func (RemoteAdapter) ClearStatus(local client.Object) bool {
	l := local.(*batchv1.Job)
	if !ptr.Deref(l.Spec.Suspend, false) {
		return false
	}
	if l.Status.StartTime == nil && l.Status.Active == 0 && ptr.Deref(l.Status.Ready, 0) == 0 && ptr.Deref(l.Status.Terminating, 0) == 0 {
		return false
	}
	l.Status.StartTime, l.Status.Active, l.Status.Ready, l.Status.Terminating = nil, 0, ptr.To[int32](0), ptr.To[int32](0)
	return true
}

// Final: Complete or Failed (SuccessCriteriaMet and FailureTarget come
// first, while pods still terminate).
func (RemoteAdapter) Final(obj client.Object) bool {
	for _, c := range obj.(*batchv1.Job).Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
