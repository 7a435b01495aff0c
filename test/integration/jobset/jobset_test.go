package jobset

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
	"github.com/sluicehq/sluice/test/integration/framework"
)

func TestJobSetIsQueuedAsOneWorkloadAndStartedOnItsFlavor(t *testing.T) {
	ns, flavor := newQueue(t, "5")
	js := newJobSet(ns, "lq")
	js.Spec.ReplicatedJobs[1].Template.Spec.Template.Spec.NodeSelector = map[string]string{"kubernetes.io/os": "linux"}
	cluster.MustCreate(t, js)
	if !ptr.Deref(js.Spec.Suspend, false) {
		t.Fatal("the webhook did not create the queued JobSet suspended")
	}

	wl := waitWorkload(t, js, "to be admitted", framework.Admitted)
	if !regexp.MustCompile(`^jobset-` + js.Name + `-[0-9a-f]{5}$`).MatchString(wl.Name) {
		t.Errorf("Workload name %q, want jobset-%s-<hash>", wl.Name, js.Name)
	}
	if owner := metav1.GetControllerOf(wl); owner == nil || owner.UID != js.UID || owner.Kind != "JobSet" || owner.APIVersion != "jobset.x-k8s.io/v1alpha2" {
		t.Errorf("controller owner %+v, want the JobSet", owner)
	}
	var sets []string
	for _, ps := range wl.Spec.PodSets {
		sets = append(sets, fmt.Sprintf("%s=%d", ps.Name, ps.Count))
	}
	if got := strings.Join(sets, ","); got != "leader=1,workers=4" {
		t.Errorf("pod sets %s, want leader=1,workers=4 (one per replicated Job, replicas times pods)", got)
	}

	started := waitJobSet(t, js, "to run", running)
	for _, rj := range started.Spec.ReplicatedJobs {
		tmpl := rj.Template.Spec.Template
		if tmpl.Spec.NodeSelector["pool"] != flavor {
			t.Errorf("replicated Job %s: nodeSelector %v, want the flavor's pool", rj.Name, tmpl.Spec.NodeSelector)
		}
		if tmpl.Labels[kueue.PodSetLabel] != rj.Name {
			t.Errorf("replicated Job %s: template labels %v lack its pod set", rj.Name, tmpl.Labels)
		}
	}
	if started.Spec.ReplicatedJobs[1].Template.Spec.Template.Spec.NodeSelector["kubernetes.io/os"] != "linux" {
		t.Error("the user's nodeSelector was lost")
	}
}

// A JobSet is admitted whole or not at all: no partial admission.
func TestJobSetWaitsUntilAllOfItFits(t *testing.T) {
	ns, _ := newQueue(t, "4")
	js := newJobSet(ns, "lq")
	cluster.MustCreate(t, js)
	wl := waitWorkload(t, js, "to exist", func(*kueue.Workload) error { return nil })
	cluster.WaitPending(t, wl, kueue.ReasonExceedsMaxQuota)
	if got := waitJobSet(t, js, "to stay suspended", suspended); got.Spec.ReplicatedJobs[1].Template.Spec.Template.Spec.NodeSelector != nil {
		t.Errorf("a waiting JobSet got a nodeSelector: %v", got.Spec.ReplicatedJobs[1].Template.Spec.Template.Spec.NodeSelector)
	}
}

func TestJobSetFinishesItsWorkload(t *testing.T) {
	for _, tc := range []struct {
		condition jobsetapi.JobSetConditionType
		reason    string
	}{{jobsetapi.JobSetCompleted, integration.FinishedReasonSucceeded}, {jobsetapi.JobSetFailed, integration.FinishedReasonFailed}} {
		t.Run(string(tc.condition), func(t *testing.T) {
			ns, _ := newQueue(t, "5")
			js := newJobSet(ns, "lq")
			cluster.MustCreate(t, js)
			waitJobSet(t, js, "to run", running)
			setStatus(t, js, func(current *jobsetapi.JobSet) {
				meta.SetStatusCondition(&current.Status.Conditions, metav1.Condition{Type: string(tc.condition), Status: metav1.ConditionTrue, Reason: "AllJobsDone", Message: "done here"})
			})
			waitWorkload(t, js, "to finish", framework.ConditionIs(kueue.WorkloadFinished, metav1.ConditionTrue, tc.reason, "done here"))
		})
	}
}

// Eviction suspends the JobSet, waits for its Jobs' pods to go, restores
// its templates and gives the quota back.
func TestEvictedJobSetIsSuspendedAndRestored(t *testing.T) {
	ns, _ := newQueue(t, "5")
	js := newJobSet(ns, "lq")
	cluster.MustCreate(t, js)
	waitJobSet(t, js, "to run", running)
	setStatus(t, js, func(current *jobsetapi.JobSet) {
		current.Status.ReplicatedJobsStatus = []jobsetapi.ReplicatedJobStatus{{Name: "leader", Active: 1}, {Name: "workers", Active: 2}}
	})
	wl := waitWorkload(t, js, "to be admitted", framework.Admitted)
	framework.Update(t, cluster.Client, wl, func() { wl.Spec.Active = ptr.To(false) })

	waitJobSet(t, js, "to be suspended", suspended)
	// Its pods still run: evicted, the quota stays taken.
	cluster.WaitWorkload(t, wl, "to be evicted and hold its quota while the pods run", func(wl *kueue.Workload) error {
		if !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted) || wl.Status.Admission == nil {
			return fmt.Errorf("evicted %v, admission %v", meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted), wl.Status.Admission != nil)
		}
		return nil
	})
	setStatus(t, js, func(current *jobsetapi.JobSet) {
		current.Status.ReplicatedJobsStatus = []jobsetapi.ReplicatedJobStatus{{Name: "leader", Suspended: 1}, {Name: "workers", Suspended: 2}}
	})
	cluster.WaitWorkload(t, wl, "to give its quota back", func(wl *kueue.Workload) error {
		if wl.Status.Admission != nil {
			return fmt.Errorf("still admitted")
		}
		return nil
	})
	restored := waitJobSet(t, js, "to be restored", func(current *jobsetapi.JobSet) error {
		for _, rj := range current.Spec.ReplicatedJobs {
			if _, ok := rj.Template.Spec.Template.Spec.NodeSelector["pool"]; ok {
				return fmt.Errorf("replicated Job %s keeps the flavor's nodeSelector", rj.Name)
			}
		}
		return nil
	})
	if _, ok := restored.Annotations[integration.OriginalPodSetsAnnotation]; ok {
		t.Error("the originals annotation stayed after the restore")
	}
}

// A JobSet's child Jobs are its own: counted by its Workload, never queued
// one by one, whatever their labels. One grown beyond its replicated Job is
// no longer one the JobSet makes: its Workload does not count the pods it
// would add, so the growing update comes back suspended, and the Job is
// queued on its own.
func TestChildJobsOfAJobSetAreLeftToIt(t *testing.T) {
	ns, _ := newQueue(t, "8")
	js := newJobSet(ns, "lq")
	cluster.MustCreate(t, js)
	started := waitJobSet(t, js, "to run", running)
	child := childJob(started, "workers", 0)
	child.Labels[kueue.QueueNameLabel] = "lq"
	// Indexed: its completions and parallelism may grow together.
	child.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	cluster.MustCreate(t, child)
	if ptr.Deref(child.Spec.Suspend, false) {
		t.Fatal("the webhook suspended a running JobSet's child Job")
	}
	cluster.NoWorkloadOf(t, child, "lq")
	cluster.ExpectGrownChildQueued(t, child, 6)
}

// A queued JobSet counts the Jobs it makes, nothing else: a Pod or a
// JobSet naming it as their controller is queued, not exempted.
func TestWhatAJobSetDoesNotMakeIsQueued(t *testing.T) {
	ns, _ := newQueue(t, "5")
	js := newJobSet(ns, "lq")
	cluster.MustCreate(t, js)
	started := waitJobSet(t, js, "to run", running)
	owner := []metav1.OwnerReference{*metav1.NewControllerRef(started, jobsetapi.SchemeGroupVersion.WithKind("JobSet"))}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster.Unique("pod"),
		Labels: map[string]string{kueue.QueueNameLabel: "lq"}, OwnerReferences: owner},
		Spec: started.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec}
	cluster.MustCreate(t, pod)
	if len(pod.Spec.SchedulingGates) == 0 || pod.Labels[kueue.ManagedLabel] != "true" {
		t.Errorf("a Pod controlled by a JobSet ran unqueued: gates %v, labels %v", pod.Spec.SchedulingGates, pod.Labels)
	}
	nested := newJobSet(ns, "lq")
	nested.OwnerReferences = owner
	cluster.MustCreate(t, nested)
	if !ptr.Deref(nested.Spec.Suspend, false) {
		t.Error("a JobSet controlled by a JobSet was created running, outside its queue")
	}
}

// A Job naming a queued JobSet as its controller is the JobSet's only if
// it is one the JobSet controller makes: named for a replica of one of its
// replicated Jobs, no larger than that replicated Job. Any other is queued
// as if it had no owner, however it names itself.
func TestOnlyTheJobsAJobSetMakesAreLeftToIt(t *testing.T) {
	ns, _ := newQueue(t, "5")
	js := newJobSet(ns, "lq")
	cluster.MustCreate(t, js)
	started := waitJobSet(t, js, "to run", running)
	for name, forge := range map[string]func(*batchv1.Job){
		"another name":               func(j *batchv1.Job) { j.Name = cluster.Unique("extra") },
		"a replica beyond its count": func(j *batchv1.Job) { j.Name = fmt.Sprintf("%s-workers-%d", started.Name, 2) },
		"a leading zero":             func(j *batchv1.Job) { j.Name = fmt.Sprintf("%s-workers-01", started.Name) },
		"more pods":                  func(j *batchv1.Job) { j.Spec.Parallelism, j.Spec.Completions = ptr.To(int32(8)), ptr.To(int32(8)) },
		"larger pods": func(j *batchv1.Job) {
			j.Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("4")
		},
	} {
		t.Run(name, func(t *testing.T) {
			forged := childJob(started, "workers", 1)
			forged.Labels[kueue.QueueNameLabel] = "lq"
			forge(forged)
			cluster.MustCreate(t, forged)
			t.Cleanup(func() {
				_ = cluster.Client.Delete(context.Background(), forged, client.PropagationPolicy(metav1.DeletePropagationBackground))
			})
			if !ptr.Deref(forged.Spec.Suspend, false) {
				t.Fatal("a Job the JobSet does not make ran as the JobSet's, outside its queue")
			}
			cluster.WaitWorkload(t, framework.JobWorkload(forged), "to queue the Job on its own", func(*kueue.Workload) error { return nil })
		})
	}
}

// The standalone variants of the owner walk: a child Job opting in alone
// is queued alone under an unqueued JobSet, and ignored (with a warning)
// under a queued one, whose Workload counts it already.
func TestStandaloneChildJobOfAnUnqueuedJobSetIsQueuedAlone(t *testing.T) {
	ns, _ := newQueue(t, "5")
	js := newJobSet(ns, "")
	cluster.MustCreate(t, js)
	child := childJob(js, "workers", 0)
	child.Labels[kueue.QueueNameLabel] = "lq"
	child.Annotations = map[string]string{kueue.StandaloneAnnotation: "true"}
	cluster.MustCreate(t, child)
	if !ptr.Deref(child.Spec.Suspend, false) {
		t.Fatal("a standalone child Job of an unqueued JobSet was not suspended")
	}
	cluster.WaitWorkload(t, framework.JobWorkload(child), "to be admitted alone", framework.Admitted)
}

func TestStandaloneChildJobOfAQueuedJobSetIsIgnored(t *testing.T) {
	ns, _ := newQueue(t, "5")
	js := newJobSet(ns, "lq")
	cluster.MustCreate(t, js)
	started := waitJobSet(t, js, "to run", running)
	child := childJob(started, "workers", 0)
	child.Labels[kueue.QueueNameLabel] = "lq"
	child.Annotations = map[string]string{kueue.StandaloneAnnotation: "true"}
	warnings := cluster.CreateWithWarnings(t, child)
	if ptr.Deref(child.Spec.Suspend, false) {
		t.Fatal("a standalone child Job of a queued JobSet was suspended: its JobSet's Workload counts it")
	}
	cluster.NoWorkloadOf(t, child, "lq")
	if !slices.ContainsFunc(warnings, func(w string) bool {
		return strings.HasPrefix(w, integration.EventStandaloneUnderQueuedParent) && strings.Contains(w, "JobSet "+js.Name)
	}) {
		t.Errorf("warnings %q, want %s naming JobSet %s", warnings, integration.EventStandaloneUnderQueuedParent, js.Name)
	}
}

// A standalone Pod of a queued JobSet's child Job is counted by the
// JobSet's Workload: the owner walk goes through the Job, which its JobSet
// counts, to the JobSet.
func TestStandalonePodUnderAQueuedJobSetIsIgnored(t *testing.T) {
	ns, _ := newQueue(t, "5")
	js := newJobSet(ns, "lq")
	cluster.MustCreate(t, js)
	started := waitJobSet(t, js, "to run", running)
	child := childJob(started, "workers", 0)
	cluster.MustCreate(t, child)
	labels := map[string]string{kueue.QueueNameLabel: "lq"}
	// The Job controller's labels, which the Job's selector selects by.
	maps.Copy(labels, child.Spec.Selector.MatchLabels)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster.Unique("pod"),
		Labels:          labels,
		Annotations:     map[string]string{kueue.StandaloneAnnotation: "true"},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(child, batchv1.SchemeGroupVersion.WithKind("Job"))}},
		Spec: child.Spec.Template.Spec}
	cluster.MustCreate(t, pod)
	if len(pod.Spec.SchedulingGates) > 0 || pod.Labels[kueue.ManagedLabel] == "true" {
		t.Fatalf("a standalone Pod under a queued JobSet was queued: gates %v, labels %v", pod.Spec.SchedulingGates, pod.Labels)
	}
	framework.Eventually(t, "a StandaloneUnderQueuedParent event naming the JobSet", func(ctx context.Context) (bool, error) {
		list := &eventsv1.EventList{}
		if err := cluster.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		for _, e := range list.Items {
			if e.Regarding.UID == pod.UID && e.Reason == integration.EventStandaloneUnderQueuedParent && strings.Contains(e.Note, "JobSet "+js.Name) {
				return true, nil
			}
		}
		return false, fmt.Errorf("%d events, none matching", len(list.Items))
	})
}

func TestJobSetWebhookRules(t *testing.T) {
	ns, _ := newQueue(t, "5")
	for _, tc := range []struct {
		name   string
		mutate func(*jobsetapi.JobSet)
		want   string
	}{
		{"more replicated Jobs than a Workload holds", func(js *jobsetapi.JobSet) {
			for i := range 8 {
				js.Spec.ReplicatedJobs = append(js.Spec.ReplicatedJobs, replicated(fmt.Sprintf("extra%d", i), 1, 1))
			}
		}, "spec.replicatedJobs: Too many: 10: must have at most 8 items"},
		{"a pod count beyond int32", func(js *jobsetapi.JobSet) {
			js.Spec.ReplicatedJobs[1].Replicas = 2000000
			js.Spec.ReplicatedJobs[1].Template.Spec.Parallelism = ptr.To(int32(2000))
			js.Spec.ReplicatedJobs[1].Template.Spec.Completions = ptr.To(int32(2000))
		}, "spec.replicatedJobs[1].replicas"},
		{"a standalone pod template", func(js *jobsetapi.JobSet) {
			js.Spec.ReplicatedJobs[0].Template.Spec.Template.Annotations = map[string]string{kueue.StandaloneAnnotation: "true"}
		}, "pods of a queued JobSet are already counted by its Workload"},
		{"a standalone child Job template", func(js *jobsetapi.JobSet) {
			js.Spec.ReplicatedJobs[0].Template.Annotations = map[string]string{kueue.StandaloneAnnotation: "true"}
		}, "spec.replicatedJobs[0].template.metadata.annotations[kueue.x-k8s.io/standalone]: Forbidden: children of a queued JobSet"},
		{"a malformed queue name", func(js *jobsetapi.JobSet) { js.Labels[kueue.QueueNameLabel] = "Not_A_Queue" }, "metadata.labels[kueue.x-k8s.io/queue-name]"},
		{"a standalone value other than true", func(js *jobsetapi.JobSet) {
			js.Annotations = map[string]string{kueue.StandaloneAnnotation: "yes"}
		}, `metadata.annotations[kueue.x-k8s.io/standalone]: Unsupported value: "yes"`},
		{"a missing priority class", func(js *jobsetapi.JobSet) { js.Labels[kueue.PriorityClassLabel] = "nope" }, "WorkloadPriorityClass nope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			js := newJobSet(ns, "lq")
			tc.mutate(js)
			err := cluster.Client.Create(context.Background(), js)
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("create: %v, want Invalid with %q", err, tc.want)
			}
		})
	}
}

func TestRunningJobSetKeepsItsQueue(t *testing.T) {
	ns, _ := newQueue(t, "5")
	js := newJobSet(ns, "lq")
	cluster.MustCreate(t, js)
	started := waitJobSet(t, js, "to run", running)
	started.Labels[kueue.QueueNameLabel] = "other"
	err := cluster.Client.Update(context.Background(), started)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "can change only while the JobSet is suspended") {
		t.Fatalf("queue change of a running JobSet: %v", err)
	}
}

// More replicas on a running JobSet suspend it in the same update (the
// JobSet controller never sees it run with them), and its Workload queues
// again with the new shape.
func TestGrownRunningJobSetStopsAndRequeues(t *testing.T) {
	ns, _ := newQueue(t, "5")
	js := newJobSet(ns, "lq")
	cluster.MustCreate(t, js)
	started := waitJobSet(t, js, "to run", running)
	started.Spec.ReplicatedJobs[1].Replicas = 4
	if err := cluster.Client.Update(context.Background(), started); err != nil {
		t.Fatal(err)
	}
	if !ptr.Deref(started.Spec.Suspend, false) {
		t.Fatal("a running JobSet given more replicas was not suspended in the same update")
	}
	wl := waitWorkload(t, js, "to queue again with 8 workers", func(wl *kueue.Workload) error {
		if wl.Status.Admission != nil || len(wl.Spec.PodSets) != 2 || wl.Spec.PodSets[1].Count != 8 {
			return fmt.Errorf("admission %v, pod sets %d", wl.Status.Admission != nil, len(wl.Spec.PodSets))
		}
		return nil
	})
	cluster.WaitPending(t, wl, kueue.ReasonExceedsMaxQuota)
	if err := framework.CheckQuotaInvariant(context.Background(), cluster.Client); err != nil {
		t.Fatal(err)
	}
}

// A JobSet deleted with orphan propagation leaves its Jobs' pods running:
// its Workload keeps the quota until they are gone.
func TestDeletedJobSetHoldsItsQuotaUntilItsPodsAreGone(t *testing.T) {
	ns, _ := newQueue(t, "5")
	js := newJobSet(ns, "lq")
	cluster.MustCreate(t, js)
	started := waitJobSet(t, js, "to run", running)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster.Unique("pod"),
		Labels: map[string]string{jobsetapi.JobSetUIDKey: string(started.UID)}},
		Spec: childJob(started, "leader", 0).Spec.Template.Spec}
	cluster.MustCreate(t, pod)
	pod.Status.Phase = corev1.PodRunning
	if err := cluster.Client.Status().Update(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Client.Delete(context.Background(), started, client.PropagationPolicy(metav1.DeletePropagationOrphan)); err != nil {
		t.Fatal(err)
	}
	next := newJobSet(ns, "lq")
	cluster.MustCreate(t, next)
	waitWorkload(t, next, "to wait for the orphaned pod's quota", func(wl *kueue.Workload) error {
		if wl.Status.Admission != nil {
			return fmt.Errorf("admitted while the deleted JobSet's pod runs")
		}
		return nil
	})
	if err := framework.CheckQuotaInvariant(context.Background(), cluster.Client); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Client.Delete(context.Background(), pod, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	waitWorkload(t, next, "to be admitted once the pod is gone", framework.Admitted)
}
