package job

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
)

func withConditions(types ...batchv1.JobConditionType) *Job {
	j := &Job{&batchv1.Job{}}
	for _, typ := range types {
		j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: typ, Status: corev1.ConditionTrue, Message: string(typ) + " message"})
	}
	return j
}

func TestFinished(t *testing.T) {
	cases := []struct {
		name            string
		job             *Job
		done, succeeded bool
	}{
		{"running", withConditions(), false, false},
		{"Complete", withConditions(batchv1.JobSuccessCriteriaMet, batchv1.JobComplete), true, true},
		{"SuccessCriteriaMet before Complete", withConditions(batchv1.JobSuccessCriteriaMet), true, true},
		{"FailureTarget before Failed", withConditions(batchv1.JobFailureTarget), true, false},
		{"Failed", withConditions(batchv1.JobFailed), true, false},
		{"Suspended is not an end", withConditions(batchv1.JobSuspended), false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			done, succeeded, msg := tc.job.Finished()
			if done != tc.done || succeeded != tc.succeeded {
				t.Errorf("Finished = %v, %v (%q); want %v, %v", done, succeeded, msg, tc.done, tc.succeeded)
			}
			if done && msg == "" {
				t.Error("a finished Job needs a message")
			}
		})
	}
}

func TestActive(t *testing.T) {
	now := metav1.Now()
	cases := []struct {
		name    string
		status  batchv1.JobStatus
		suspend bool
		want    bool
	}{
		{"pods running", batchv1.JobStatus{Active: 2, StartTime: &now}, false, true},
		{"pods terminating after suspension", batchv1.JobStatus{Terminating: ptr.To(int32(1))}, true, true},
		{"suspended, controller not caught up (startTime kept)", batchv1.JobStatus{StartTime: &now}, true, true},
		{"suspended and stopped", batchv1.JobStatus{}, true, false},
		{"never started", batchv1.JobStatus{}, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := &Job{&batchv1.Job{Spec: batchv1.JobSpec{Suspend: ptr.To(tc.suspend)}, Status: tc.status}}
			if got := j.Active(); got != tc.want {
				t.Errorf("Active = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestReclaimablePods(t *testing.T) {
	cases := []struct {
		name        string
		parallelism int32
		completions *int32
		succeeded   int32
		want        []kueue.ReclaimablePod
	}{
		{"no completions (work queue)", 3, nil, 2, nil},
		{"more completions left than pods", 2, ptr.To(int32(5)), 2, nil},
		{"one completion left, two pods", 2, ptr.To(int32(5)), 4, []kueue.ReclaimablePod{{Name: "main", Count: 1}}},
		{"all done", 2, ptr.To(int32(5)), 5, []kueue.ReclaimablePod{{Name: "main", Count: 2}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := &Job{&batchv1.Job{Spec: batchv1.JobSpec{Parallelism: ptr.To(tc.parallelism), Completions: tc.completions},
				Status: batchv1.JobStatus{Succeeded: tc.succeeded}}}
			if diff := cmp.Diff(tc.want, j.ReclaimablePods()); diff != "" {
				t.Errorf("ReclaimablePods (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRunAndRestore(t *testing.T) {
	j := &Job{&batchv1.Job{Spec: batchv1.JobSpec{Suspend: ptr.To(true), Parallelism: ptr.To(int32(5)),
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{NodeSelector: map[string]string{"os": "linux"}}}}}}
	originals := j.Originals()
	err := j.Run([]integration.PodSetInfo{{Name: "main", Count: 3, NodeSelector: map[string]string{"pool": "spot"},
		Labels: map[string]string{kueue.PodSetLabel: "main"}}})
	if err != nil {
		t.Fatal(err)
	}
	if j.IsSuspended() || *j.Spec.Parallelism != 3 || j.Spec.Template.Spec.NodeSelector["pool"] != "spot" {
		t.Fatalf("after Run: suspend %v, parallelism %d, nodeSelector %v", j.IsSuspended(), *j.Spec.Parallelism, j.Spec.Template.Spec.NodeSelector)
	}
	j.Suspend()
	if !j.Restore(originals) {
		t.Fatal("Restore reported no change")
	}
	if *j.Spec.Parallelism != 5 || !reflect.DeepEqual(j.Spec.Template.Spec.NodeSelector, map[string]string{"os": "linux"}) || j.Spec.Template.Labels != nil {
		t.Errorf("after Restore: parallelism %d, nodeSelector %v, labels %v", *j.Spec.Parallelism, j.Spec.Template.Spec.NodeSelector, j.Spec.Template.Labels)
	}
	if err := j.Run(nil); err == nil {
		t.Error("Run with no pod-set info must fail: a Job has one pod set")
	}
}

func TestManagedElsewhere(t *testing.T) {
	for _, tc := range []struct {
		managedBy *string
		want      string
	}{{nil, ""}, {ptr.To(JobControllerName), ""},
		// MultiKueue's Jobs are queued here first: not elsewhere.
		{ptr.To("kueue.x-k8s.io/multikueue"), ""},
		{ptr.To("example.com/dispatcher"), "example.com/dispatcher"}} {
		j := &Job{&batchv1.Job{Spec: batchv1.JobSpec{ManagedBy: tc.managedBy}}}
		if got := j.ManagedElsewhere(); got != tc.want {
			t.Errorf("managedBy %v: ManagedElsewhere = %q, want %q", tc.managedBy, got, tc.want)
		}
	}
}
