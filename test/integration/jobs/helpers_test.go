package jobs

import (
	"context"
	"fmt"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// queueSetup is a namespace with a LocalQueue "lq" in front of a
// ClusterQueue of its own with cpu quota in one flavor.
type queueSetup struct {
	ns     string
	cq     *kueue.ClusterQueue
	flavor *kueue.ResourceFlavor
}

// newQueue creates the namespace, a flavor (with nodeLabels, and a taint
// when tainted), a ClusterQueue with cpu in it and the LocalQueue "lq".
func newQueue(t *testing.T, cpu string, tainted bool) *queueSetup {
	t.Helper()
	s := &queueSetup{ns: cluster.Unique("jobs")}
	cluster.MustCreate(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.ns}})
	s.flavor = &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: cluster.Unique("flavor")}}
	s.flavor.Spec.NodeLabels = map[string]string{"pool": s.flavor.Name}
	if tainted {
		s.flavor.Spec.NodeTaints = []corev1.Taint{{Key: "spot", Value: "true", Effect: corev1.TaintEffectNoSchedule}}
		s.flavor.Spec.Tolerations = []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule}}
	}
	s.cq = &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: cluster.Unique("cq")}, Spec: kueue.ClusterQueueSpec{
		NamespaceSelector: &metav1.LabelSelector{},
		ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
			Flavors: []kueue.FlavorQuotas{{Name: kueue.ResourceFlavorReference(s.flavor.Name),
				Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse(cpu)}}}}}},
	}}
	cluster.MustCreate(t, s.flavor, s.cq, &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "lq"},
		Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(s.cq.Name)}})
	framework.Eventually(t, s.cq.Name+" to be active", func(ctx context.Context) (bool, error) {
		current := &kueue.ClusterQueue{}
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(s.cq), current); err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(current.Status.Conditions, kueue.ConditionActive), nil
	})
	return s
}

// newJob is a Job of parallelism pods of cpu each in LocalQueue lq (none
// when lq is empty), not suspended: the webhook suspends it.
func newJob(ns, lq string, parallelism int32, cpu string) *batchv1.Job {
	return framework.Job(ns, cluster.Unique("job"), lq, parallelism, cpu)
}

func getJob(t *testing.T, j *batchv1.Job) *batchv1.Job {
	t.Helper()
	out := &batchv1.Job{}
	if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(j), out); err != nil {
		t.Fatal(err)
	}
	return out
}

// workloadOf is the Workload of a Job, named as the contract says.
func workloadOf(j *batchv1.Job) *kueue.Workload { return framework.JobWorkload(j) }

// waitWorkload waits until the Job's Workload satisfies cond and returns it.
func waitWorkload(t *testing.T, j *batchv1.Job, what string, cond func(*kueue.Workload) error) *kueue.Workload {
	t.Helper()
	wl := workloadOf(j)
	framework.Eventually(t, fmt.Sprintf("the Workload of %s %s", j.Name, what), func(ctx context.Context) (bool, error) {
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(wl), wl); err != nil {
			return false, err
		}
		return true, cond(wl)
	})
	return wl
}

// waitJob waits until the Job satisfies cond and returns it.
func waitJob(t *testing.T, j *batchv1.Job, what string, cond func(*batchv1.Job) error) *batchv1.Job {
	t.Helper()
	current := &batchv1.Job{}
	framework.Eventually(t, fmt.Sprintf("Job %s %s", j.Name, what), func(ctx context.Context) (bool, error) {
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(j), current); err != nil {
			return false, err
		}
		return true, cond(current)
	})
	return current
}

func running(j *batchv1.Job) error { return framework.Running(j.Spec.Suspend) }

func suspended(j *batchv1.Job) error { return framework.Suspended(j.Spec.Suspend) }

func pending(wl *kueue.Workload) error {
	if wl.Status.Admission != nil || !meta.IsStatusConditionFalse(wl.Status.Conditions, kueue.WorkloadQuotaReserved) {
		return fmt.Errorf("not pending: admission %v, conditions %v", wl.Status.Admission, wl.Status.Conditions)
	}
	return nil
}

func finished(reason string) func(*kueue.Workload) error {
	return func(wl *kueue.Workload) error {
		c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadFinished)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != reason {
			return fmt.Errorf("Finished: %+v", c)
		}
		return nil
	}
}

// setJobStatus writes the Job's status as the Job controller would.
func setJobStatus(t *testing.T, j *batchv1.Job, mutate func(*batchv1.Job)) {
	t.Helper()
	cluster.SetJobStatus(t, j, mutate)
}

// startPods simulates the Job controller starting the Job's pods.
func startPods(t *testing.T, j *batchv1.Job, active int32) {
	t.Helper()
	setJobStatus(t, j, func(current *batchv1.Job) {
		current.Status.StartTime = ptr.To(metav1.Now())
		current.Status.Active = active
		current.Status.Ready = ptr.To(active)
	})
}

// complete simulates the Job controller finishing the Job successfully.
func complete(t *testing.T, j *batchv1.Job) {
	t.Helper()
	setJobStatus(t, j, func(current *batchv1.Job) {
		now := metav1.Now()
		if current.Status.StartTime == nil {
			current.Status.StartTime = &now
		}
		current.Status.Active = 0
		current.Status.Ready = ptr.To(int32(0))
		current.Status.Succeeded = ptr.Deref(current.Spec.Completions, 1)
		current.Status.CompletionTime = &now
		current.Status.Conditions = append(current.Status.Conditions,
			batchv1.JobCondition{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: now},
			batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: now})
	})
}

// update applies mutate to the latest version of obj and writes it.
func update(t *testing.T, obj client.Object, mutate func()) {
	t.Helper()
	framework.Update(t, cluster.Client, obj, mutate)
}

// waitEvent waits for an event on the object with the reason and a note
// containing every part.
func waitEvent(t *testing.T, obj client.Object, reason string, parts ...string) {
	t.Helper()
	framework.Eventually(t, fmt.Sprintf("a %s event on %s", reason, obj.GetName()), func(ctx context.Context) (bool, error) {
		list := &eventsv1.EventList{}
		if err := cluster.Client.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
			return false, err
		}
		var seen []string
		for _, e := range list.Items {
			if e.Regarding.UID != obj.GetUID() {
				continue
			}
			seen = append(seen, e.Reason+": "+e.Note)
			if e.Reason != reason {
				continue
			}
			all := true
			for _, p := range parts {
				all = all && strings.Contains(e.Note, p)
			}
			if all {
				return true, nil
			}
		}
		return false, fmt.Errorf("events: %v", seen)
	})
}

func apiEqual(a, b any) bool { return equality.Semantic.DeepEqual(a, b) }
