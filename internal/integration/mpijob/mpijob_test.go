package mpijob

import (
	"encoding/json"
	"testing"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/sluicehq/sluice/internal/integration"
)

func TestPodSetsAndDefaults(t *testing.T) {
	job := newMPIJob(&mpiv2.MPIJob{Spec: mpiv2.MPIJobSpec{MPIReplicaSpecs: map[mpiv2.MPIReplicaType]*mpiv2.ReplicaSpec{
		mpiv2.MPIReplicaTypeWorker: {Replicas: ptr.To(int32(3))}, mpiv2.MPIReplicaTypeLauncher: {}}}})
	podSets, err := job.PodSets()
	if err != nil || len(podSets) != 2 || podSets[0].Name != "launcher" || podSets[0].Count != 1 || podSets[1].Name != "worker" || podSets[1].Count != 3 {
		t.Fatalf("pod sets %+v (%v), want launcher=1 (the default) then worker=3", podSets, err)
	}
	job.Spec.MPIReplicaSpecs["Server"] = &mpiv2.ReplicaSpec{}
	if _, err := job.PodSets(); err == nil {
		t.Error("an unknown replica type: no error")
	}
}

func TestStatus(t *testing.T) {
	job := newMPIJob(&mpiv2.MPIJob{})
	if job.Active() {
		t.Error("active without replica statuses")
	}
	job.Status.ReplicaStatuses = map[mpiv2.MPIReplicaType]*mpiv2.ReplicaStatus{mpiv2.MPIReplicaTypeWorker: {Active: 2}, mpiv2.MPIReplicaTypeLauncher: nil}
	if !job.Active() {
		t.Error("not active with active workers")
	}
	job.Status.Conditions = []mpiv2.JobCondition{{Type: mpiv2.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded"}}
	if done, ok, msg := job.Finished(); !done || ok || msg != "MPIJob failed: BackoffLimitExceeded" {
		t.Errorf("finished %v %v %q", done, ok, msg)
	}
}

func TestStartedWithItsWorkersEndingWithIt(t *testing.T) {
	for _, tc := range []struct {
		policy *mpiv2.CleanPodPolicy
		want   mpiv2.CleanPodPolicy
	}{
		{nil, mpiv2.CleanPodPolicyRunning},
		{ptr.To(mpiv2.CleanPodPolicyNone), mpiv2.CleanPodPolicyRunning},
		{ptr.To(mpiv2.CleanPodPolicyAll), mpiv2.CleanPodPolicyAll},
		{ptr.To(mpiv2.CleanPodPolicyRunning), mpiv2.CleanPodPolicyRunning},
	} {
		job := newMPIJob(&mpiv2.MPIJob{Spec: mpiv2.MPIJobSpec{RunPolicy: mpiv2.RunPolicy{CleanPodPolicy: tc.policy, Suspend: ptr.To(true)},
			MPIReplicaSpecs: map[mpiv2.MPIReplicaType]*mpiv2.ReplicaSpec{mpiv2.MPIReplicaTypeLauncher: {}}}})
		if err := job.Run([]integration.PodSetInfo{{Name: "launcher"}}); err != nil {
			t.Fatal(err)
		}
		if got := ptr.Deref(job.Spec.RunPolicy.CleanPodPolicy, ""); got != tc.want || job.IsSuspended() {
			t.Errorf("policy %v: started with %q (suspended %v), want %q", tc.policy, got, job.IsSuspended(), tc.want)
		}
	}
	if errs := validateCleanPodPolicy(&mpiv2.MPIJob{Spec: mpiv2.MPIJobSpec{RunPolicy: mpiv2.RunPolicy{CleanPodPolicy: ptr.To(mpiv2.CleanPodPolicyNone)}}}); len(errs) != 1 || errs[0].Field != "spec.runPolicy.cleanPodPolicy" {
		t.Errorf("None: %v, want refused naming the field", errs)
	}
}

// FuzzMPIJob: pod sets, rules and the grow check answer any decodable
// MPIJob with errors, never a panic.
func FuzzMPIJob(f *testing.F) {
	f.Add([]byte(`{"spec":{"mpiReplicaSpecs":{"Launcher":null,"Worker":{"replicas":-1}}},"status":{"replicaStatuses":{"Worker":null}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var job mpiv2.MPIJob
		if json.Unmarshal(data, &job) != nil {
			return
		}
		j := newMPIJob(&job)
		_, _ = j.PodSets()
		_ = j.Originals()
		_ = j.Active()
		_, _, _ = j.Finished()
		integration.SuspendIfGrown(newMPIJob(job.DeepCopy()), j)
	})
}
