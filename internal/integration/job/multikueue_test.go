package job

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
)

// The copy sent to a worker is the Job as submitted: what admission
// injected in the manager undone, its generated selector and labels
// dropped, suspended, run by the worker's Job controller, and pointing at
// the prebuilt Workload.
func TestRemoteCopyIsTheJobAsSubmitted(t *testing.T) {
	local := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "train", UID: "uid-1", Labels: map[string]string{kueue.QueueNameLabel: "lq"}},
		Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](2), ManagedBy: ptr.To(kueue.MultiKueueControllerName),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{batchv1.ControllerUidLabel: "uid-1"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{batchv1.ControllerUidLabel: "uid-1", "app": "x"}},
				Spec: corev1.PodSpec{NodeSelector: map[string]string{"zone": "a"}}}}}
	j := &Job{local}
	originals := j.Originals()
	if err := runWithOriginalsForTest(j, originals, []integration.PodSetInfo{{Name: PodSetName, NodeSelector: map[string]string{"flavor": "manager-only"}}}); err != nil {
		t.Fatal(err)
	}
	got, err := RemoteAdapter{}.RemoteCopy(local, "wl-1", "origin-a")
	if err != nil {
		t.Fatal(err)
	}
	remote := got.(*batchv1.Job)
	switch {
	case remote.Spec.ManagedBy != nil, remote.Spec.Selector != nil, !ptr.Deref(remote.Spec.Suspend, false):
		t.Fatalf("managedBy %v, selector %v, suspend %v", remote.Spec.ManagedBy, remote.Spec.Selector, remote.Spec.Suspend)
	case remote.Spec.Template.Spec.NodeSelector["flavor"] != "" || remote.Spec.Template.Spec.NodeSelector["zone"] != "a":
		t.Fatalf("nodeSelector %v: the manager's admission leaked into the copy", remote.Spec.Template.Spec.NodeSelector)
	case remote.Spec.Template.Labels[batchv1.ControllerUidLabel] != "" || remote.Spec.Template.Labels["app"] != "x":
		t.Fatalf("template labels %v", remote.Spec.Template.Labels)
	case remote.Labels[kueue.PrebuiltWorkloadLabel] != "wl-1" || remote.Labels[kueue.MultiKueueOriginLabel] != "origin-a" || remote.Labels[kueue.QueueNameLabel] != "lq":
		t.Fatalf("labels %v", remote.Labels)
	case remote.Annotations[kueue.MultiKueueOriginUIDAnnotation] != "uid-1" || remote.Annotations[integration.OriginalPodSetsAnnotation] != "":
		t.Fatalf("annotations %v", remote.Annotations)
	}
	if local.Spec.Template.Spec.NodeSelector["flavor"] != "manager-only" {
		t.Fatal("RemoteCopy changed the local Job")
	}
}

// runWithOriginalsForTest starts j as the framework does: originals
// recorded in the annotation, the admission injected.
func runWithOriginalsForTest(j *Job, originals, infos []integration.PodSetInfo) error {
	encoded, err := integration.EncodeOriginals(originals)
	if err != nil {
		return err
	}
	j.Annotations = map[string]string{integration.OriginalPodSetsAnnotation: encoded}
	return j.Run(infos)
}

// A suspended local Job keeps its status until the worker's Job finished;
// a running one mirrors it; ClearStatus forgets the worker's pods.
func TestMirrorStatus(t *testing.T) {
	a := RemoteAdapter{}
	now := metav1.Now()
	running := &batchv1.Job{Status: batchv1.JobStatus{Active: 2, Ready: ptr.To[int32](2), StartTime: &now}}
	local := &batchv1.Job{Spec: batchv1.JobSpec{Suspend: ptr.To(true)}}
	if a.MirrorStatus(local, running) {
		t.Fatal("a suspended local Job took a running worker's status")
	}
	local.Spec.Suspend = ptr.To(false)
	if !a.MirrorStatus(local, running) || local.Status.Active != 2 || a.MirrorStatus(local, running) {
		t.Fatal("a running local Job does not mirror the worker's status exactly once")
	}
	if a.ClearStatus(local) {
		t.Fatal("ClearStatus acted on a running local Job")
	}
	local.Spec.Suspend = ptr.To(true)
	if !a.ClearStatus(local) || local.Status.StartTime != nil || local.Status.Active != 0 {
		t.Fatalf("after ClearStatus: %+v", local.Status)
	}
	done := &batchv1.Job{Status: batchv1.JobStatus{Succeeded: 2, Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}}}
	if !a.MirrorStatus(local, done) || !a.Final(done) || a.Final(running) {
		t.Fatal("a finished worker Job's status is not mirrored onto a suspended local Job, or Final is wrong")
	}
}
