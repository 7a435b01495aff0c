package jobs

import (
	"context"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/test/integration/framework"
)

func TestWhichJobsAreQueued(t *testing.T) {
	q := newQueue(t, "16", false) // room for every queued Job and marker
	parent := newJob(q.ns, "", 1, "1")
	cluster.MustCreate(t, parent)
	ownedBy := func(j *batchv1.Job) {
		j.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(parent, batchv1.SchemeGroupVersion.WithKind("Job"))}
	}
	cases := []struct {
		name   string
		modify func(j *batchv1.Job)
		queued bool
	}{
		{"queue-name label", func(*batchv1.Job) {}, true},
		{"no queue-name and no default LocalQueue", func(j *batchv1.Job) { j.Labels = nil }, false},
		// A Job makes no Jobs: one naming a Job as its controller is queued
		// (a JobSet's Jobs, left to it, are in the jobset suite).
		{"controlled by a Job, which is no parent of Jobs", ownedBy, true},
		{"controlled by a Job, with standalone", func(j *batchv1.Job) {
			ownedBy(j)
			j.Annotations = map[string]string{kueue.StandaloneAnnotation: "true"}
		}, true},
		{"owned by an unknown kind", func(j *batchv1.Job) {
			j.OwnerReferences = []metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: "Pipeline", Name: "p", UID: "p-uid", Controller: ptr.To(true)}}
		}, true},
		{"managedBy another controller", func(j *batchv1.Job) { j.Spec.ManagedBy = ptr.To("example.com/dispatcher") }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := newJob(q.ns, "lq", 1, "1")
			tc.modify(j)
			cluster.MustCreate(t, j)
			if got := ptr.Deref(j.Spec.Suspend, false); got != tc.queued {
				t.Fatalf("created with suspend=%v, want %v", got, tc.queued)
			}
			if tc.queued {
				waitJob(t, j, "to run", running)
				return
			}
			// Not queued: the Job keeps running with no Workload. Wait for the
			// reconciler to have seen it (a later Job in the same namespace is
			// handled), then check nothing was created for this one.
			marker := newJob(q.ns, "lq", 1, "1")
			cluster.MustCreate(t, marker)
			waitWorkload(t, marker, "to exist", func(*kueue.Workload) error { return nil })
			err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(workloadOf(j)), &kueue.Workload{})
			if !apierrors.IsNotFound(err) {
				t.Errorf("a Workload exists for a Job that isn't queued (err %v)", err)
			}
			if ptr.Deref(getJob(t, j).Spec.Suspend, false) {
				t.Error("a Job that isn't queued was suspended")
			}
		})
	}
}

func TestDefaultLocalQueue(t *testing.T) {
	q := newQueue(t, "4", false)
	lq := &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: q.ns, Name: "default"},
		Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(q.cq.Name)}}
	cluster.MustCreate(t, lq)
	// The webhook reads LocalQueues from the manager's cache: wait until the
	// manager has seen this one (it reports it Active).
	framework.Eventually(t, "the default LocalQueue to be active", func(ctx context.Context) (bool, error) {
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(lq), lq); err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(lq.Status.Conditions, kueue.ConditionActive), nil
	})
	j := newJob(q.ns, "", 1, "1")
	cluster.MustCreate(t, j)
	if j.Labels[kueue.QueueNameLabel] != "default" || !ptr.Deref(j.Spec.Suspend, false) {
		t.Fatalf("labels %v, suspend %v: want queue-name default, suspended", j.Labels, j.Spec.Suspend)
	}
	waitJob(t, j, "to run", running)
}

func TestJobValidation(t *testing.T) {
	q := newQueue(t, "1", false)
	cases := []struct {
		name   string
		modify func(j *batchv1.Job)
		want   []string
	}{
		{"min-parallelism above parallelism", func(j *batchv1.Job) {
			j.Annotations = map[string]string{kueue.JobMinParallelismAnno: "5"}
		}, []string{kueue.JobMinParallelismAnno, "between 1 and the Job's parallelism (2)"}},
		{"min-parallelism not a number", func(j *batchv1.Job) {
			j.Annotations = map[string]string{kueue.JobMinParallelismAnno: "two"}
		}, []string{kueue.JobMinParallelismAnno, "must be an integer"}},
		{"standalone other than true", func(j *batchv1.Job) {
			j.Annotations = map[string]string{kueue.StandaloneAnnotation: "yes"}
		}, []string{kueue.StandaloneAnnotation, `"true"`}},
		{"queue-name not a name", func(j *batchv1.Job) { j.Labels[kueue.QueueNameLabel] = "Not_A_Name" }, []string{kueue.QueueNameLabel, "LocalQueue name"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := newJob(q.ns, "lq", 2, "1")
			tc.modify(j)
			expectInvalid(t, cluster.Client.Create(context.Background(), j), tc.want...)
		})
	}

	t.Run("queue-name changes only while suspended", func(t *testing.T) {
		// No LocalQueue "missing": the Job stays suspended until it names lq.
		j := newJob(q.ns, "missing", 1, "1")
		cluster.MustCreate(t, j)
		update(t, j, func() { j.Labels[kueue.QueueNameLabel] = "other" }) // suspended: allowed
		update(t, j, func() { j.Labels[kueue.QueueNameLabel] = "lq" })
		waitJob(t, j, "to run", running)
		err := cluster.TryUpdate(j, func() { j.Labels[kueue.QueueNameLabel] = "other" })
		expectInvalid(t, err, kueue.QueueNameLabel, "only while the Job is suspended")
	})
	t.Run("standalone is immutable", func(t *testing.T) {
		j := newJob(q.ns, "lq", 1, "1")
		cluster.MustCreate(t, j)
		err := cluster.TryUpdate(j, func() { j.Annotations = map[string]string{kueue.StandaloneAnnotation: "true"} })
		expectInvalid(t, err, kueue.StandaloneAnnotation, "immutable")
	})
}

func expectInvalid(t *testing.T, err error, parts ...string) {
	t.Helper()
	if !apierrors.IsInvalid(err) {
		t.Fatalf("got %v, want an Invalid error", err)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q lacks %q", err, p)
		}
	}
}
