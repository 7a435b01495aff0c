package jobs

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
	"github.com/sluicehq/sluice/test/integration/framework"
)

func TestJobIsSuspendedQueuedAndStartedOnItsFlavor(t *testing.T) {
	q := newQueue(t, "4", true)
	j := newJob(q.ns, "lq", 2, "1")
	j.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}}
	j.Spec.Template.Spec.NodeSelector = map[string]string{"kubernetes.io/os": "linux"}
	cluster.MustCreate(t, j)
	if !ptr.Deref(j.Spec.Suspend, false) {
		t.Fatal("the webhook did not create the queued Job suspended")
	}

	wl := waitWorkload(t, j, "to be admitted", framework.Admitted)
	if !regexp.MustCompile(`^job-` + j.Name + `-[0-9a-f]{5}$`).MatchString(wl.Name) {
		t.Errorf("Workload name %q, want job-%s-<hash>", wl.Name, j.Name)
	}
	owner := metav1.GetControllerOf(wl)
	if owner == nil || owner.UID != j.UID || owner.Kind != "Job" || owner.APIVersion != "batch/v1" {
		t.Errorf("controller owner %+v, want the Job", owner)
	}
	if wl.Labels[kueue.JobUIDLabel] != string(j.UID) || wl.Spec.QueueName != "lq" {
		t.Errorf("labels %v, queueName %q", wl.Labels, wl.Spec.QueueName)
	}
	if len(wl.Spec.PodSets) != 1 || wl.Spec.PodSets[0].Name != "main" || wl.Spec.PodSets[0].Count != 2 {
		t.Errorf("podSets %+v, want one podSet main of 2", wl.Spec.PodSets)
	}

	started := waitJob(t, j, "to run", running)
	spec := started.Spec.Template.Spec
	if spec.NodeSelector["pool"] != q.flavor.Name || spec.NodeSelector["kubernetes.io/os"] != "linux" {
		t.Errorf("nodeSelector %v, want the flavor's pool added to the user's", spec.NodeSelector)
	}
	if !slices.ContainsFunc(spec.Tolerations, func(tol corev1.Toleration) bool { return tol.Key == "spot" && tol.Value == "true" }) {
		t.Errorf("tolerations %v lack the flavor's", spec.Tolerations)
	}
	if started.Spec.Template.Labels[kueue.PodSetLabel] != "main" {
		t.Errorf("template labels %v lack the podset label", started.Spec.Template.Labels)
	}
	if _, ok := started.Annotations[integration.OriginalPodSetsAnnotation]; !ok {
		t.Errorf("annotations %v lack the original pod-set info", started.Annotations)
	}
	waitEvent(t, j, integration.EventCreatedWorkload, wl.Name)
	waitEvent(t, j, integration.EventStarted, q.cq.Name, "cpu="+q.flavor.Name)
}

func TestJobsRunAsQuotaFreesUp(t *testing.T) {
	q := newQueue(t, "4", false)
	var jobs []*batchv1.Job
	for range 5 {
		j := newJob(q.ns, "lq", 2, "1")
		cluster.MustCreate(t, j)
		jobs = append(jobs, j)
	}
	runningNow := func() []string {
		var out []string
		for _, j := range jobs {
			if !ptr.Deref(getJob(t, j).Spec.Suspend, true) {
				out = append(out, j.Name)
			}
		}
		return out
	}
	done := map[string]bool{}
	for round := 0; len(done) < len(jobs); round++ {
		var now []string
		framework.Eventually(t, fmt.Sprintf("round %d: two Jobs running (or all that are left)", round), func(context.Context) (bool, error) {
			now = runningNow()
			want := min(2, len(jobs)-len(done))
			var fresh []string
			for _, name := range now {
				if !done[name] {
					fresh = append(fresh, name)
				}
			}
			if len(fresh) != want {
				return false, fmt.Errorf("running %v, done %v", now, done)
			}
			now = fresh
			return true, nil
		})
		// Never more than the quota: two 2-CPU Jobs in 4 CPU.
		for _, j := range jobs {
			if slices.Contains(now, j.Name) {
				complete(t, j)
				done[j.Name] = true
				waitWorkload(t, j, "to finish", finished(integration.FinishedReasonSucceeded))
			}
		}
	}
	framework.Eventually(t, "the ClusterQueue to report zero usage", func(ctx context.Context) (bool, error) {
		cq := &kueue.ClusterQueue{}
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(q.cq), cq); err != nil {
			return false, err
		}
		if cq.Status.ReservingWorkloads != 0 || cq.Status.AdmittedWorkloads != 0 {
			return false, fmt.Errorf("reserving %d, admitted %d", cq.Status.ReservingWorkloads, cq.Status.AdmittedWorkloads)
		}
		for _, fu := range cq.Status.FlavorsUsage {
			for _, r := range fu.Resources {
				if !r.Total.IsZero() {
					return false, fmt.Errorf("usage %v", cq.Status.FlavorsUsage)
				}
			}
		}
		return true, nil
	})
}

func TestEvictionStopsTheJobBeforeGivingBackTheQuota(t *testing.T) {
	q := newQueue(t, "4", true)
	j := newJob(q.ns, "lq", 2, "1")
	j.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}}
	cluster.MustCreate(t, j)
	original := getJob(t, j).Spec.Template
	waitJob(t, j, "to run", running)
	startPods(t, j, 2)

	// Drain the ClusterQueue: the Job is evicted and queued again.
	update(t, q.cq, func() { q.cq.Spec.StopPolicy = ptr.To(kueue.StopPolicyHoldAndDrain) })
	waitJob(t, j, "to be suspended", suspended)
	waitEvent(t, j, integration.EventStopped, kueue.EvictedByClusterQueueStopped)
	// Its pods still run: the reservation stays.
	wl := waitWorkload(t, j, "to be evicted", func(wl *kueue.Workload) error {
		if !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted) {
			return fmt.Errorf("conditions %v", wl.Status.Conditions)
		}
		return nil
	})
	if wl.Status.Admission == nil || !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved) {
		t.Fatalf("the reservation was cleared while the Job's pods ran: %v", wl.Status.Conditions)
	}
	consistentlyReserved(t, j)

	// The Job controller removes the pods and resets startTime.
	setJobStatus(t, j, func(current *batchv1.Job) {
		current.Status.Active, current.Status.Ready, current.Status.StartTime = 0, ptr.To(int32(0)), nil
	})
	wl = waitWorkload(t, j, "to give its quota back and queue again", pending)
	if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadRequeued); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Requeued %+v, want True", c)
	}
	restored := getJob(t, j)
	if !apiEqual(restored.Spec.Template, original) {
		t.Errorf("template not restored:\n%+v\nwant\n%+v", restored.Spec.Template, original)
	}
	if _, ok := restored.Annotations[integration.OriginalPodSetsAnnotation]; ok {
		t.Error("the original pod-set annotation stayed after the restore")
	}

	// The queue resumes: the Job runs again.
	update(t, q.cq, func() { q.cq.Spec.StopPolicy = nil })
	waitJob(t, j, "to run again", running)
	waitWorkload(t, j, "to be admitted again", framework.Admitted)
}

// consistentlyReserved checks, over a few polls, that the Job's Workload
// keeps its reservation while its pods are active.
func consistentlyReserved(t *testing.T, j *batchv1.Job) {
	t.Helper()
	for range 10 {
		wl := workloadOf(j)
		if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(wl), wl); err != nil {
			t.Fatal(err)
		}
		if wl.Status.Admission == nil {
			t.Fatalf("the reservation was cleared while the Job had active pods")
		}
		// A fresh read of the Job too: the reconciler runs on every change.
		getJob(t, j)
	}
}

func TestDeactivationStopsTheJobForGood(t *testing.T) {
	q := newQueue(t, "4", false)
	j := newJob(q.ns, "lq", 1, "1")
	cluster.MustCreate(t, j)
	waitJob(t, j, "to run", running)
	wl := waitWorkload(t, j, "to be admitted", framework.Admitted)
	update(t, wl, func() { wl.Spec.Active = ptr.To(false) })
	waitJob(t, j, "to be suspended", suspended)
	wl = waitWorkload(t, j, "to lose its reservation", pending)
	if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadRequeued); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("Requeued %+v, want False for a deactivated workload", c)
	}
	if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted); c == nil || c.Reason != kueue.EvictedByDeactivation {
		t.Errorf("Evicted %+v, want reason %s", c, kueue.EvictedByDeactivation)
	}
}

func TestFinishedJobsFinishTheirWorkload(t *testing.T) {
	q := newQueue(t, "8", false)
	cases := []struct {
		name       string
		conditions []batchv1.JobConditionType
		reason     string
	}{
		{"Complete", []batchv1.JobConditionType{batchv1.JobSuccessCriteriaMet, batchv1.JobComplete}, integration.FinishedReasonSucceeded},
		{"SuccessCriteriaMet (successPolicy), pods still terminating", []batchv1.JobConditionType{batchv1.JobSuccessCriteriaMet}, integration.FinishedReasonSucceeded},
		{"FailureTarget (podFailurePolicy), pods still terminating", []batchv1.JobConditionType{batchv1.JobFailureTarget}, integration.FinishedReasonFailed},
		{"Failed", []batchv1.JobConditionType{batchv1.JobFailureTarget, batchv1.JobFailed}, integration.FinishedReasonFailed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := newJob(q.ns, "lq", 1, "1")
			cluster.MustCreate(t, j)
			waitJob(t, j, "to run", running)
			startPods(t, j, 1)
			setJobStatus(t, j, func(current *batchv1.Job) {
				now := metav1.Now()
				for _, typ := range tc.conditions {
					current.Status.Conditions = append(current.Status.Conditions, batchv1.JobCondition{
						Type: typ, Status: corev1.ConditionTrue, Reason: "Test", Message: "set by the test", LastTransitionTime: now})
				}
				if slices.Contains(tc.conditions, batchv1.JobComplete) {
					current.Status.Active, current.Status.Ready, current.Status.Succeeded, current.Status.CompletionTime = 0, ptr.To(int32(0)), 1, &now
				}
				if slices.Contains(tc.conditions, batchv1.JobFailed) {
					current.Status.Active, current.Status.Ready, current.Status.Failed = 0, ptr.To(int32(0)), 1
				}
			})
			waitWorkload(t, j, "to finish", finished(tc.reason))
			waitEvent(t, j, integration.EventFinished, tc.reason)
		})
	}
}
