package jobset

import (
	"math"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
)

func replicatedJob(name string, replicas, parallelism int32, completions *int32) jobsetapi.ReplicatedJob {
	return jobsetapi.ReplicatedJob{Name: name, Replicas: replicas, Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
		Parallelism: ptr.To(parallelism), Completions: completions,
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}},
	}}}
}

func jobSet(rjs ...jobsetapi.ReplicatedJob) *jobsetapi.JobSet {
	return &jobsetapi.JobSet{Spec: jobsetapi.JobSetSpec{ReplicatedJobs: rjs}}
}

func TestPodSetsCountReplicasTimesPodsPerJob(t *testing.T) {
	js := jobSet(replicatedJob("driver", 0, 1, nil), replicatedJob("workers", 3, 4, ptr.To(int32(2))))
	podSets, errs := PodSets(js)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	// Replicas 0 is JobSet's default of 1; completions below parallelism
	// cap the pods a Job runs at once.
	if len(podSets) != 2 || podSets[0].Name != "driver" || podSets[0].Count != 1 || podSets[1].Name != "workers" || podSets[1].Count != 6 {
		t.Fatalf("pod sets %+v, want driver=1 workers=6", podSets)
	}
}

func TestPodSetsRefuseWhatAWorkloadCannotHold(t *testing.T) {
	for name, tc := range map[string]struct {
		js   *jobsetapi.JobSet
		want string
	}{
		"no replicated Job": {jobSet(), "spec.replicatedJobs: Required value"},
		"nine replicated":   {jobSet(replicatedJob("a", 1, 1, nil), replicatedJob("b", 1, 1, nil), replicatedJob("c", 1, 1, nil), replicatedJob("d", 1, 1, nil), replicatedJob("e", 1, 1, nil), replicatedJob("f", 1, 1, nil), replicatedJob("g", 1, 1, nil), replicatedJob("h", 1, 1, nil), replicatedJob("i", 1, 1, nil)), "must have at most 8 items"},
		"overflowing count": {jobSet(replicatedJob("a", math.MaxInt32, 2, nil)), "spec.replicatedJobs[0].replicas"},
		"negative replicas": {jobSet(replicatedJob("a", -1, 2, nil)), "must not be negative"},
		"zero parallelism":  {jobSet(replicatedJob("a", 1, 0, nil)), "spec.replicatedJobs[0].template.spec.parallelism"},
		"bad pod-set name":  {jobSet(replicatedJob("Not_A_Name", 1, 1, nil)), "spec.replicatedJobs[0].name"},
	} {
		t.Run(name, func(t *testing.T) {
			_, errs := PodSets(tc.js)
			if len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), tc.want) {
				t.Fatalf("errors %v, want one with %q", errs, tc.want)
			}
		})
	}
}

func TestRunInjectsEachReplicatedJobAndRestoreUndoesIt(t *testing.T) {
	js := newJobSet(jobSet(replicatedJob("driver", 1, 1, nil), replicatedJob("workers", 2, 2, nil)))
	js.Suspend()
	originals := js.Originals()
	infos := []integration.PodSetInfo{
		{Name: "workers", NodeSelector: map[string]string{"pool": "b"}},
		{Name: "driver", NodeSelector: map[string]string{"pool": "a"}},
	}
	if err := js.Run(infos); err != nil {
		t.Fatal(err)
	}
	if js.IsSuspended() {
		t.Error("still suspended after Run")
	}
	if got := js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.NodeSelector["pool"]; got != "a" {
		t.Errorf("driver pool %q, want a (matched by name, not position)", got)
	}
	if got := js.Spec.ReplicatedJobs[1].Template.Spec.Template.Spec.NodeSelector["pool"]; got != "b" {
		t.Errorf("workers pool %q, want b", got)
	}
	if !js.Restore(originals) {
		t.Fatal("Restore reported no change")
	}
	for _, rj := range js.Spec.ReplicatedJobs {
		if len(rj.Template.Spec.Template.Spec.NodeSelector) != 0 {
			t.Errorf("%s keeps nodeSelector %v", rj.Name, rj.Template.Spec.Template.Spec.NodeSelector)
		}
	}
	if err := js.Run(infos[:1]); err == nil {
		t.Error("Run with a pod set missing: no error")
	}
	if err := js.Run([]integration.PodSetInfo{{Name: "driver"}, {Name: "other"}}); err == nil {
		t.Error("Run naming a pod set that is no replicated Job: no error")
	}
}

func TestStatusReadings(t *testing.T) {
	js := newJobSet(jobSet(replicatedJob("driver", 1, 1, nil), replicatedJob("workers", 3, 2, nil)))
	js.Status.ReplicatedJobsStatus = []jobsetapi.ReplicatedJobStatus{{Name: "driver", Ready: 1, Active: 1}, {Name: "workers", Ready: 2, Succeeded: 1, Active: 2}, {Name: "gone", Succeeded: 9, Ready: 9}}
	if !js.Active() {
		t.Error("not active with active Jobs")
	}
	if got := js.ReadyPods(); got != 1+2*2 {
		t.Errorf("ready pods %d, want 5", got)
	}
	reclaimable := js.ReclaimablePods()
	if len(reclaimable) != 1 || reclaimable[0] != (kueue.ReclaimablePod{Name: "workers", Count: 2}) {
		t.Errorf("reclaimable %+v, want workers=2 (one succeeded Job of 2 pods; unknown names ignored)", reclaimable)
	}
	if done, _, _ := js.Finished(); done {
		t.Error("finished without a terminal condition")
	}
	js.Spec.ManagedBy = ptr.To("example.com/other")
	if js.ManagedElsewhere() != "example.com/other" {
		t.Error("another controller's JobSet is not managed elsewhere")
	}
	js.Spec.ManagedBy = ptr.To(kueue.MultiKueueControllerName)
	if js.ManagedElsewhere() != "" {
		t.Error("a MultiKueue JobSet is not sluice's")
	}
}

func TestSuspendIfGrown(t *testing.T) {
	started := func() *jobsetapi.JobSet {
		js := jobSet(replicatedJob("driver", 1, 1, nil), replicatedJob("workers", 2, 2, nil))
		js.Annotations = map[string]string{integration.OriginalPodSetsAnnotation: "[]"}
		js.Spec.Suspend = ptr.To(false)
		return js
	}
	for name, tc := range map[string]struct {
		mutate  func(*jobsetapi.JobSet)
		suspend bool
	}{
		"more replicas":        {func(js *jobsetapi.JobSet) { js.Spec.ReplicatedJobs[1].Replicas = 3 }, true},
		"more parallelism":     {func(js *jobsetapi.JobSet) { js.Spec.ReplicatedJobs[1].Template.Spec.Parallelism = ptr.To(int32(3)) }, true},
		"a new replicated Job": {func(js *jobsetapi.JobSet) { js.Spec.ReplicatedJobs[0].Name = "leader" }, true},
		"larger requests": {func(js *jobsetapi.JobSet) {
			js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("2")
		}, true},
		"fewer replicas": {func(js *jobsetapi.JobSet) { js.Spec.ReplicatedJobs[1].Replicas = 1 }, false},
		"a label":        {func(js *jobsetapi.JobSet) { js.Labels = map[string]string{"a": "b"} }, false},
	} {
		t.Run(name, func(t *testing.T) {
			old, updated := started(), started()
			tc.mutate(updated)
			suspendIfGrown(old, updated)
			if got := ptr.Deref(updated.Spec.Suspend, false); got != tc.suspend {
				t.Errorf("suspended %v, want %v", got, tc.suspend)
			}
		})
	}
	// A JobSet sluice did not start is not sluice's to suspend.
	old, updated := started(), started()
	updated.Annotations = nil
	updated.Spec.ReplicatedJobs[1].Replicas = 9
	suspendIfGrown(old, updated)
	if ptr.Deref(updated.Spec.Suspend, false) {
		t.Error("suspended a JobSet sluice never started")
	}
}

// The JobSet makes the Jobs it names <jobset>-<replicated Job>-<index>,
// index below the replicas in canonical form, no larger than the
// template; replicated Jobs whose names prefix each other are told apart.
func TestMakesTheJobsOfItsReplicas(t *testing.T) {
	js := jobSet(replicatedJob("a", 2, 2, nil), replicatedJob("a-b", 1, 1, nil))
	js.Name = "train"
	jobOf := func(name string, rj jobsetapi.ReplicatedJob) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: *rj.Template.Spec.DeepCopy()}
	}
	a, ab := js.Spec.ReplicatedJobs[0], js.Spec.ReplicatedJobs[1]
	larger := jobOf("train-a-0", a)
	larger.Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("2")
	for name, tc := range map[string]struct {
		job  *batchv1.Job
		made bool
	}{
		"a replica":                  {jobOf("train-a-1", a), true},
		"a replica of a-b":           {jobOf("train-a-b-0", ab), true},
		"a-b's shape under a's name": {jobOf("train-a-0", ab), true},
		"beyond the replicas":        {jobOf("train-a-2", a), false},
		"a leading zero":             {jobOf("train-a-01", a), false},
		"a sign":                     {jobOf("train-a-+1", a), false},
		"another JobSet's":           {jobOf("other-a-0", a), false},
		"more pods":                  {jobOf("train-a-b-0", a), false},
		"larger pods":                {larger, false},
	} {
		if got := makes(js, tc.job); got != tc.made {
			t.Errorf("%s (%s): made %v, want %v", name, tc.job.Name, got, tc.made)
		}
	}
	if makes(js, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "train-a-0"}}) {
		t.Error("a JobSet makes a Pod")
	}
}
