//go:build drills

package drills

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/test/integration/framework"
)

const (
	teamNamespace = "team"
	localQueue    = "lq"
)

// setupQueues makes the drills' queues: one ClusterQueue of cpu CPUs that
// preempts lower priorities within itself, its LocalQueue in the team
// namespace.
func (d *drillCluster) setupQueues(cpu string) {
	d.t.Helper()
	cq := framework.ClusterQueue("cq", "", framework.CPUQuota{Flavor: "default", Nominal: cpu})
	cq.Spec.NamespaceSelector = &metav1.LabelSelector{}
	cq.Spec.Preemption = &kueue.ClusterQueuePreemption{WithinClusterQueue: kueue.PreemptionPolicyLowerPriority}
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: teamNamespace}},
		framework.Flavor("default", nil),
		cq,
		framework.LocalQueue(teamNamespace, localQueue, "cq"),
	} {
		if err := d.client.Create(d.ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			d.t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
		}
	}
	d.eventually("the ClusterQueue to be active", time.Minute, func(ctx context.Context) (bool, error) {
		got := &kueue.ClusterQueue{}
		if err := d.client.Get(ctx, client.ObjectKey{Name: "cq"}, got); err != nil {
			return false, nil
		}
		return meta.IsStatusConditionTrue(got.Status.Conditions, kueue.ConditionActive), nil
	})
}

// eventually polls cond until it holds or timeout passes.
func (d *drillCluster) eventually(what string, timeout time.Duration, cond func(context.Context) (bool, error)) {
	d.t.Helper()
	err := wait.PollUntilContextTimeout(d.ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		return ok && err == nil, nil
	})
	if err != nil {
		d.t.Fatalf("timed out after %s waiting for %s", timeout, what)
	}
}

// jobSpec is one Job of the load.
type jobSpec struct {
	name     string
	cpu      string
	runFor   string
	priority string // a WorkloadPriorityClass name, or ""
	// ttl deletes the Job a while after it finished (the soak's steady
	// state).
	ttl bool
}

func (s jobSpec) job() *batchv1.Job {
	labels := map[string]string{kueue.QueueNameLabel: localQueue}
	if s.priority != "" {
		labels[kueue.PriorityClassLabel] = s.priority
	}
	var ttl *int32
	if s.ttl {
		ttl = ptr.To[int32](20)
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: teamNamespace, Name: s.name, Labels: labels},
		Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](1), Completions: ptr.To[int32](1), BackoffLimit: ptr.To[int32](0), TTLSecondsAfterFinished: ttl,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"sluice.dev/run-for": s.runFor}},
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(s.cpu)}}}}}}},
	}
}

// load creates Jobs in the background: one every interval, until count or
// ctx ends. Creations refused (the API server may be down, or the webhook)
// are retried until they land, so that every Job of the load exists in the
// end.
type load struct {
	ttl      bool
	created  atomic.Int64
	refused  atomic.Int64
	names    []string
	mu       sync.Mutex
	done     chan struct{}
	firstErr string
}

func (d *drillCluster) startLoad(count int, interval time.Duration, spec func(i int) jobSpec) *load {
	l := &load{done: make(chan struct{}), ttl: count > 0 && spec(0).ttl}
	for i := range count {
		l.names = append(l.names, spec(i).name)
	}
	go func() {
		defer close(l.done)
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		for i := range count {
			job := spec(i).job()
			for {
				err := d.client.Create(d.ctx, job)
				if err == nil || apierrors.IsAlreadyExists(err) {
					break
				}
				l.refused.Add(1)
				l.mu.Lock()
				if l.firstErr == "" {
					l.firstErr = err.Error()
				}
				l.mu.Unlock()
				select {
				case <-d.ctx.Done():
					return
				case <-time.After(200 * time.Millisecond):
				}
				job = spec(i).job()
			}
			l.created.Add(1)
			select {
			case <-d.ctx.Done():
				return
			case <-ticker.C:
			}
		}
	}()
	return l
}

// waitCreated waits until the load has created every Job.
func (l *load) waitCreated(timeout time.Duration) error {
	select {
	case <-l.done:
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("the load created %d of %d Jobs in %s", l.created.Load(), len(l.names), timeout)
	}
}

// waitComplete waits until every Job of the load has completed, and
// returns how many have not.
func (d *drillCluster) waitComplete(l *load, timeout time.Duration) int {
	d.t.Helper()
	notDone := len(l.names)
	_ = wait.PollUntilContextTimeout(d.ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		jobs := &batchv1.JobList{}
		if err := d.client.List(ctx, jobs, client.InNamespace(teamNamespace)); err != nil {
			return false, nil
		}
		complete := map[string]bool{}
		for i := range jobs.Items {
			for _, c := range jobs.Items[i].Status.Conditions {
				if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
					complete[jobs.Items[i].Name] = true
				}
			}
		}
		present := map[string]bool{}
		for i := range jobs.Items {
			present[jobs.Items[i].Name] = true
		}
		notDone = 0
		for _, n := range l.names {
			// A Job deleted after it finished (ttlSecondsAfterFinished)
			// is done.
			if !complete[n] && (present[n] || !l.ttl) {
				notDone++
			}
		}
		if notDone > 0 {
			d.nudgeStuckPods(ctx)
		}
		return notDone == 0, nil
	})
	return notDone
}

// stuckAfter is how long a bound pod may go without a status change before
// the drill takes its simulated kubelet's next step for dropped.
const stuckAfter = 30 * time.Second

// nudgeStuckPods touches the bound, unfinished pods whose status has not
// changed for stuckAfter. kwok (the simulated kubelet) drops a pod's stage
// when its status patch fails while the API server restarts (kwok v0.8
// retries only some failures), and the pod then never runs on: a gap in
// the simulator, not in sluice, which had started the Job. A real kubelet
// keeps syncing pod status; an update makes kwok play the stage again.
// The drill logs each pod it nudges.
func (d *drillCluster) nudgeStuckPods(ctx context.Context) {
	pods := &corev1.PodList{}
	if err := d.client.List(ctx, pods, client.InNamespace(teamNamespace)); err != nil {
		return
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName == "" || !p.DeletionTimestamp.IsZero() || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		last := p.CreationTimestamp.Time
		for _, c := range p.Status.Conditions {
			last = latest(last, c.LastTransitionTime.Time)
		}
		if v, ok := p.Annotations[nudgedAnnotation]; ok {
			if at, err := time.Parse(time.RFC3339, v); err == nil {
				last = latest(last, at)
			}
		}
		if time.Since(last) < stuckAfter {
			continue
		}
		patch := client.MergeFrom(p.DeepCopy())
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[nudgedAnnotation] = time.Now().UTC().Format(time.RFC3339)
		if err := d.client.Patch(ctx, p, patch); err == nil {
			d.t.Logf("nudged pod %s: no status change for %s (its simulated kubelet dropped a step)", p.Name, stuckAfter)
		}
	}
}

const nudgedAnnotation = "drills.sluice.dev/nudged"

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
