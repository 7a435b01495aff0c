package jobs

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// withChecks adds admission checks (Active, run by a controller the test
// plays) to the queue's ClusterQueue and waits until admission uses them.
func (s *queueSetup) withChecks(t *testing.T, count int) []string {
	t.Helper()
	var names []string
	for range count {
		names = append(names, cluster.ActiveAdmissionCheck(t, "example.com/gate").Name)
	}
	update(t, s.cq, func() {
		s.cq.Spec.AdmissionChecksStrategy = &kueue.AdmissionChecksStrategy{}
		for _, n := range names {
			s.cq.Spec.AdmissionChecksStrategy.AdmissionChecks = append(s.cq.Spec.AdmissionChecksStrategy.AdmissionChecks, kueue.AdmissionCheckStrategyRule{Name: n})
		}
	})
	cluster.WaitActive(t, s.cq)
	return names
}

func reservedWaitingForChecks(wl *kueue.Workload) error {
	if wl.Status.Admission == nil || len(wl.Status.AdmissionChecks) == 0 {
		return fmt.Errorf("not reserved with checks: %+v", wl.Status)
	}
	if meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted) {
		return fmt.Errorf("admitted before its checks")
	}
	return nil
}

// A Job whose quota is reserved stays suspended until every check is
// Ready, then starts with the checks' podSetUpdates in its pod template.
func TestJobStartsWhenItsChecksAreReady(t *testing.T) {
	s := newQueue(t, "2", false)
	checks := s.withChecks(t, 2)
	j := newJob(s.ns, "lq", 1, "1")
	cluster.MustCreate(t, j)
	waitWorkload(t, j, "reserved, waiting for its checks", reservedWaitingForChecks)
	waitJob(t, j, "suspended while its checks are pending", suspended)

	wl := workloadOf(j)
	cluster.SetCheck(t, wl, checks[0], kueue.CheckStateReady, func(c *kueue.AdmissionCheckState) {
		c.PodSetUpdates = []kueue.PodSetUpdate{{Name: "main", Labels: map[string]string{"capacity": "booked"},
			Annotations:  map[string]string{"example.com/booking": "b-1"},
			NodeSelector: map[string]string{"zone": "a"},
			Tolerations:  []corev1.Toleration{{Key: "booked", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}}}
	})
	waitWorkload(t, j, "still waiting for the other check", reservedWaitingForChecks)
	if got := getJob(t, j); suspended(got) != nil {
		t.Fatal("the Job started with one of its two checks pending")
	}
	cluster.SetCheck(t, wl, checks[1], kueue.CheckStateReady, func(c *kueue.AdmissionCheckState) {
		c.PodSetUpdates = []kueue.PodSetUpdate{{Name: "main", Labels: map[string]string{"team": "ml"}}}
	})
	waitWorkload(t, j, "admitted", framework.Admitted)
	got := waitJob(t, j, "running", running)
	tmpl := got.Spec.Template
	if tmpl.Labels["capacity"] != "booked" || tmpl.Labels["team"] != "ml" || tmpl.Annotations["example.com/booking"] != "b-1" ||
		tmpl.Spec.NodeSelector["zone"] != "a" || tmpl.Spec.NodeSelector["pool"] != s.flavor.Name ||
		!slices.ContainsFunc(tmpl.Spec.Tolerations, func(t corev1.Toleration) bool { return t.Key == "booked" }) {
		t.Fatalf("the running Job's template lacks the checks' updates: labels %v, annotations %v, nodeSelector %v, tolerations %v",
			tmpl.Labels, tmpl.Annotations, tmpl.Spec.NodeSelector, tmpl.Spec.Tolerations)
	}
	// A check withdrawn after the start takes the admission away: the Job
	// stops, its quota still reserved.
	cluster.SetCheck(t, wl, checks[1], kueue.CheckStatePending, nil)
	waitWorkload(t, j, "reserved but no longer admitted", reservedWaitingForChecks)
	waitJob(t, j, "stopped", suspended)
}

// Two checks that set the same label to different values can't both be
// honoured: the Workload finishes as FailedToStart, naming the conflict,
// and the Job never runs.
func TestConflictingPodSetUpdatesFailTheWorkload(t *testing.T) {
	s := newQueue(t, "2", false)
	checks := s.withChecks(t, 2)
	j := newJob(s.ns, "lq", 1, "1")
	cluster.MustCreate(t, j)
	wl := workloadOf(j)
	waitWorkload(t, j, "reserved, waiting for its checks", reservedWaitingForChecks)
	for i, zone := range []string{"a", "b"} {
		cluster.SetCheck(t, wl, checks[i], kueue.CheckStateReady, func(c *kueue.AdmissionCheckState) {
			c.PodSetUpdates = []kueue.PodSetUpdate{{Name: "main", Labels: map[string]string{"zone": zone}}}
		})
	}
	got := waitWorkload(t, j, "finished as FailedToStart", finished(integration.FinishedReasonFailedToStart))
	if msg := meta.FindStatusCondition(got.Status.Conditions, kueue.WorkloadFinished).Message; !strings.Contains(msg, "zone") || !strings.Contains(msg, "conflicting") {
		t.Fatalf("Finished message %q does not name the conflict", msg)
	}
	if suspended(getJob(t, j)) != nil {
		t.Fatal("a Job with conflicting podSetUpdates ran")
	}
}

// The checks widen the time between reservation and start: a Job whose
// parallelism is raised while they are pending must still not run beyond
// what was reserved once they pass. It is evicted as changed and queues
// again with its new count, which waits (6 CPU can never fit in 2).
func TestJobRaisedWhileItsChecksArePendingDoesNotRunBeyondItsReservation(t *testing.T) {
	s := newQueue(t, "2", false)
	checks := s.withChecks(t, 1)
	j := newJob(s.ns, "lq", 1, "1")
	j.Spec.Completions = ptr.To(int32(12))
	cluster.MustCreate(t, j)
	waitWorkload(t, j, "reserved, waiting for its checks", reservedWaitingForChecks)
	update(t, j, func() { j.Spec.Parallelism = ptr.To(int32(6)) })
	cluster.SetCheck(t, workloadOf(j), checks[0], kueue.CheckStateReady, nil)
	waitWorkload(t, j, "to queue again with 6 pods", func(wl *kueue.Workload) error {
		if wl.Status.Admission != nil || wl.Spec.PodSets[0].Count != 6 {
			return fmt.Errorf("admission %v, count %d", wl.Status.Admission, wl.Spec.PodSets[0].Count)
		}
		return nil
	})
	if got := getJob(t, j); !ptr.Deref(got.Spec.Suspend, false) {
		t.Fatalf("the raised Job runs (parallelism %d) on a 1-pod reservation", ptr.Deref(got.Spec.Parallelism, 0))
	}
	if err := framework.CheckQuotaInvariant(context.Background(), cluster.Client); err != nil {
		t.Fatal(err)
	}
}
