package trainjob

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/apis/scheme"
	"github.com/sluicehq/sluice/internal/integration"
)

func newTrainJob(t *testing.T, doc string) *TrainJob {
	t.Helper()
	u := newObject()
	if err := json.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	u.SetGroupVersionKind(GVK)
	return &TrainJob{Unstructured: u}
}

// jobSetOf is a JobSet as the trainer builds it for job: a "node"
// replicated Job of nodes pods of 2 CPU, controlled by the TrainJob.
func jobSetOf(job *TrainJob, nodes int32) *jobsetapi.JobSet {
	return &jobsetapi.JobSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: job.GetNamespace(), Name: job.GetName(),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: GVK.GroupVersion().String(), Kind: GVK.Kind, Name: job.GetName(), UID: job.GetUID(), Controller: ptr.To(true)}}},
		Spec: jobsetapi.JobSetSpec{Suspend: ptr.To(true), ReplicatedJobs: []jobsetapi.ReplicatedJob{{Name: "node", Replicas: 1,
			Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Parallelism: ptr.To(nodes), Completions: ptr.To(nodes),
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "node"}}}}}}}}},
	}
}

func resolved(t *testing.T, job *TrainJob, objs ...client.Object) {
	t.Helper()
	reader := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objs...).Build()
	if err := job.Resolve(context.Background(), reader); err != nil {
		t.Fatal(err)
	}
}

const suspendedJob = `{"metadata":{"namespace":"ns","name":"train","uid":"u1"},"spec":{"runtimeRef":{"name":"torch"},"suspend":true,
	"runtimePatches":[{"manager":"example.com/tenant","trainingRuntimeSpec":{"template":{"metadata":{"labels":{"team":"a"}}}}}]}}`

func TestPodSetsAreTheJobSetsTheTrainerBuilt(t *testing.T) {
	job := newTrainJob(t, suspendedJob)
	resolved(t, job)
	if _, err := job.PodSets(); !errors.Is(err, integration.ErrPodSetsNotBuilt) {
		t.Fatalf("without its JobSet: %v, want ErrPodSetsNotBuilt", err)
	}

	other := jobSetOf(job, 4)
	other.OwnerReferences[0].UID = "someone-else"
	resolved(t, job, other)
	if _, err := job.PodSets(); !errors.Is(err, integration.ErrPodSetsNotBuilt) {
		t.Fatalf("with a JobSet of its name it doesn't control: %v, want ErrPodSetsNotBuilt", err)
	}

	resolved(t, job, jobSetOf(job, 4))
	podSets, err := job.PodSets()
	if err != nil || len(podSets) != 1 || podSets[0].Name != "node" || podSets[0].Count != 4 {
		t.Fatalf("pod sets %+v (%v), want node=4", podSets, err)
	}
}

// A JobSet that still has what the last admission injected, while the
// TrainJob no longer has sluice's patch, is one the trainer has not rebuilt.
func TestAJobSetStillInjectedIsNotBuiltYet(t *testing.T) {
	job := newTrainJob(t, suspendedJob)
	js := jobSetOf(job, 2)
	js.Spec.ReplicatedJobs[0].Template.Spec.Template.Annotations = map[string]string{admittedAnnotation: "true"}
	resolved(t, job, js)
	if _, err := job.PodSets(); !errors.Is(err, integration.ErrPodSetsNotBuilt) {
		t.Fatalf("%v, want ErrPodSetsNotBuilt", err)
	}
	if err := job.Run([]integration.PodSetInfo{{Name: "node"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := job.PodSets(); err != nil {
		t.Fatalf("with sluice's patch on, the injected JobSet is the one it runs: %v", err)
	}
}

func TestRunWritesSluicesPatchAndRestorePutsItAtRest(t *testing.T) {
	job := newTrainJob(t, suspendedJob)
	infos := []integration.PodSetInfo{{Name: "node", Labels: map[string]string{kueue.PodSetLabel: "node"},
		NodeSelector: map[string]string{"pool": "spot"}, Tolerations: []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}}}}
	for range 2 { // a second Run replaces the patch, it doesn't add one
		if err := job.Run(infos); err != nil {
			t.Fatal(err)
		}
	}
	if !job.IsSuspended() {
		t.Fatal("Run unsuspended the TrainJob: the trainer takes runtime patches only while it is suspended")
	}
	patches := runtimePatches(job.Unstructured)
	if len(patches) != 2 {
		t.Fatalf("%d runtime patches, want the tenant's and sluice's", len(patches))
	}
	rjobs, _, _ := unstructured.NestedSlice(patches[1].(map[string]any), "trainingRuntimeSpec", "template", "spec", "replicatedJobs")
	if len(rjobs) != 1 {
		t.Fatalf("replicated job patches %v", rjobs)
	}
	pool, _, _ := unstructured.NestedString(rjobs[0].(map[string]any), "template", "spec", "template", "spec", "nodeSelector", "pool")
	label, _, _ := unstructured.NestedString(rjobs[0].(map[string]any), "template", "spec", "template", "metadata", "labels", kueue.PodSetLabel)
	if pool != "spot" || label != "node" {
		t.Errorf("sluice's patch has pool=%q podset=%q", pool, label)
	}
	job.Unsuspend()
	if job.IsSuspended() {
		t.Fatal("Unsuspend left it suspended")
	}
	if !hasAdmission(job.Unstructured) {
		t.Fatal("sluice's patch does not say it injects an admission")
	}
	if !job.Restore(nil) {
		t.Fatal("Restore found no admission to take out")
	}
	if hasAdmission(job.Unstructured) {
		t.Fatal("after Restore, sluice's patch still injects an admission")
	}
	left := runtimePatches(job.Unstructured)
	if len(left) != 2 || left[0].(map[string]any)["manager"] != "example.com/tenant" {
		t.Fatalf("after Restore: %v, want the tenant's patch first", left)
	}
	// At rest, sluice's patch keeps only the podset label: the trainer's
	// apply must not empty the pod template's metadata.
	rest, _, _ := unstructured.NestedSlice(left[1].(map[string]any), "trainingRuntimeSpec", "template", "spec", "replicatedJobs")
	metadata, _, _ := unstructured.NestedMap(rest[0].(map[string]any), "template", "spec", "template", "metadata")
	podSpec, _, _ := unstructured.NestedMap(rest[0].(map[string]any), "template", "spec", "template", "spec")
	if len(metadata) != 1 || len(podSpec) != 0 || metadata["labels"].(map[string]any)[kueue.PodSetLabel] != "node" {
		t.Errorf("sluice's patch at rest: metadata %v, spec %v; want the podset label alone", metadata, podSpec)
	}
	if job.Restore(nil) {
		t.Error("a second Restore changed something")
	}
}

func TestStatus(t *testing.T) {
	job := newTrainJob(t, `{"metadata":{"namespace":"ns","name":"train","uid":"u1"},"spec":{"suspend":true},
		"status":{"jobsStatus":[{"name":"node","active":0}],"conditions":[{"type":"Failed","status":"True","reason":"JobsFailed","message":"node failed","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`)
	js := jobSetOf(job, 2)
	resolved(t, job, js)
	if job.Active() {
		t.Error("active with a suspended JobSet and no active Jobs")
	}
	if done, ok, msg := job.Finished(); !done || ok || msg != "node failed" {
		t.Errorf("finished %v %v %q", done, ok, msg)
	}
	js.Spec.Suspend = ptr.To(false)
	resolved(t, job, js)
	if !job.Active() {
		t.Error("not active while its JobSet runs")
	}
	_ = unstructured.SetNestedSlice(job.Unstructured.Object, []any{map[string]any{"name": "node", "active": int64(1)}}, "status", "jobsStatus")
	resolved(t, job)
	if !job.Active() {
		t.Error("not active while the trainer counts an active Job")
	}
	for by, elsewhere := range map[string]string{"": "", trainerController: "", kueue.MultiKueueControllerName: "", "example.com/other": "example.com/other"} {
		_ = unstructured.SetNestedField(job.Unstructured.Object, by, "spec", "managedBy")
		if got := job.ManagedElsewhere(); got != elsewhere {
			t.Errorf("managedBy %q: ManagedElsewhere %q, want %q", by, got, elsewhere)
		}
	}
}

// FuzzTrainJob: any decodable TrainJob and JobSet are read, run and
// restored with errors, never a panic.
func FuzzTrainJob(f *testing.F) {
	f.Add([]byte(`{"spec":{"suspend":"yes","runtimePatches":[7,{"manager":"kueue.x-k8s.io/manager"}],"managedBy":3},"status":{"conditions":[1],"jobsStatus":["x"]}}`),
		[]byte(`{"spec":{"replicatedJobs":[{"name":"node","replicas":-1}]}}`))
	f.Fuzz(func(t *testing.T, trainJob, jobSet []byte) {
		u := newObject()
		if json.Unmarshal(trainJob, &u.Object) != nil || u.Object == nil {
			return
		}
		u.SetUID(types.UID("u1"))
		js := &jobsetapi.JobSet{}
		if json.Unmarshal(jobSet, js) != nil {
			return
		}
		job := &TrainJob{Unstructured: u, jobSet: js}
		_, _ = job.PodSets()
		_, _, _ = job.Finished()
		_ = job.Active()
		_ = job.ReadyPods()
		_ = job.ReclaimablePods()
		_ = job.ManagedElsewhere()
		_ = job.IsSuspended()
		if job.Run([]integration.PodSetInfo{{Name: "node"}}) == nil {
			job.Restore(nil)
		}
	})
}
