//go:build drills

package drills

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/apis/scheme"
	"github.com/sluicehq/sluice/internal/workload"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// checker watches the invariants while a drill runs:
//
//	(Q) admitted usage never exceeds any queue or cohort bound (exact
//	    arithmetic: the integration suites' checker);
//	(P) no job pod runs without its Workload holding a reservation;
//	(E) every Workload is admitted at most once more than it was evicted
//	    (exactly once per run of its job);
//
// and records when each Workload was first admitted, for (F) and the
// recovery figures. (Z) is checked once at the end (noFinalizersLeft).
type checker struct {
	d         *drillCluster
	namespace string

	mu         sync.Mutex
	violations []string
	checks     int
	// per Workload (by UID): admissions and evictions seen, whether it
	// holds a reservation now, and when it was last admitted.
	admissions, evictions map[types.UID]int
	reserved              map[types.UID]bool
	evictedAt             map[types.UID]metav1.Time
	admittedAt            map[types.UID]time.Time
	names                 map[types.UID]string
	// suspects are running pods seen without a reservation once: a second
	// sighting is a violation (the first may be a race between the lists).
	suspects map[types.UID]bool
	// fitsSince is, for each pending Workload that fits in the free quota
	// of its queue, since when it has fitted without a break; faultOver is
	// when the drill's last fault ended (zero: not over yet). A Workload
	// fitting for maxRecovery past both is (F).
	fitsSince  map[types.UID]time.Time
	faultOver  time.Time
	longestFit time.Duration
}

func (d *drillCluster) startChecker(namespace string) *checker {
	c := &checker{d: d, namespace: namespace, admissions: map[types.UID]int{}, evictions: map[types.UID]int{},
		reserved: map[types.UID]bool{}, evictedAt: map[types.UID]metav1.Time{}, admittedAt: map[types.UID]time.Time{},
		names: map[types.UID]string{}, suspects: map[types.UID]bool{}, fitsSince: map[types.UID]time.Time{}}
	ctx, cancel := context.WithCancel(d.ctx)
	d.t.Cleanup(cancel)
	go c.watchWorkloads(ctx)
	go wait.UntilWithContext(ctx, c.checkOnce, 500*time.Millisecond)
	return c
}

func (c *checker) violate(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.violations) < 50 {
		c.violations = append(c.violations, time.Now().Format("15:04:05.000")+" "+fmt.Sprintf(format, args...))
	}
}

// checkOnce checks (Q) and (P) against the API server; a failed read (the
// API server may be down: that is the drill) checks nothing.
func (c *checker) checkOnce(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cl := c.d.client
	if err := framework.CheckQuotaInvariant(ctx, cl); err != nil {
		if isReadError(err) {
			return
		}
		c.violate("(Q) %v", err)
	}
	wls := &kueue.WorkloadList{}
	if err := cl.List(ctx, wls, client.InNamespace(c.namespace)); err != nil {
		return
	}
	reservedJobs := map[types.UID]bool{}
	for i := range wls.Items {
		wl := &wls.Items[i]
		if workload.HasQuotaReservation(wl) && !workload.IsFinished(wl) {
			for _, o := range wl.OwnerReferences {
				reservedJobs[o.UID] = true
			}
		}
	}
	cq := &kueue.ClusterQueue{}
	if err := cl.Get(ctx, client.ObjectKey{Name: "cq"}, cq); err == nil {
		c.checkFits(cq, wls.Items)
	}
	pods := &corev1.PodList{}
	if err := cl.List(ctx, pods, client.InNamespace(c.namespace)); err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.checks++
	seen := map[types.UID]bool{}
	for i := range pods.Items {
		p := &pods.Items[i]
		job := metav1.GetControllerOf(p)
		if job == nil || job.Kind != "Job" || p.Status.Phase != corev1.PodRunning || !p.DeletionTimestamp.IsZero() || reservedJobs[job.UID] {
			continue
		}
		seen[p.UID] = true
		if c.suspects[p.UID] && len(c.violations) < 50 {
			c.violations = append(c.violations, fmt.Sprintf("%s (P) pod %s of Job %s runs and its Workload holds no reservation",
				time.Now().Format("15:04:05.000"), p.Name, job.Name))
		}
	}
	c.suspects = seen
}

func isReadError(err error) bool {
	return errors.Is(err, framework.ErrRead) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// checkFits tracks (F): pending Workloads whose CPU fits in what the
// queue has free.
func (c *checker) checkFits(cq *kueue.ClusterQueue, wls []kueue.Workload) {
	free := int64(0)
	for _, rg := range cq.Spec.ResourceGroups {
		for _, f := range rg.Flavors {
			for _, r := range f.Resources {
				if r.Name == corev1.ResourceCPU {
					free += r.NominalQuota.MilliValue()
				}
			}
		}
	}
	for i := range wls {
		wl := &wls[i]
		if workload.HasQuotaReservation(wl) && !workload.IsFinished(wl) {
			for _, psa := range wl.Status.Admission.PodSetAssignments {
				q := psa.ResourceUsage[corev1.ResourceCPU]
				free -= q.MilliValue()
			}
		}
	}
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	fitting := map[types.UID]bool{}
	for i := range wls {
		wl := &wls[i]
		if workload.HasQuotaReservation(wl) || workload.IsFinished(wl) || !wl.DeletionTimestamp.IsZero() {
			continue
		}
		need := int64(0)
		for _, ps := range wl.Spec.PodSets {
			q := ps.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]
			need += q.MilliValue() * int64(ps.Count)
		}
		if need > free {
			continue
		}
		fitting[wl.UID] = true
		since, ok := c.fitsSince[wl.UID]
		if !ok {
			since = now
			c.fitsSince[wl.UID] = now
		}
		if c.faultOver.IsZero() {
			continue
		}
		from := since
		if c.faultOver.After(from) {
			from = c.faultOver
		}
		if waited := now.Sub(from); waited > c.longestFit {
			c.longestFit = waited
			if waited > maxRecovery && len(c.violations) < 50 {
				c.violations = append(c.violations, fmt.Sprintf("%s (F) Workload %s has fitted in the free quota for %s since the fault ended and is still pending",
					now.Format("15:04:05.000"), wl.Name, waited.Round(time.Second)))
			}
		}
	}
	for uid := range c.fitsSince {
		if !fitting[uid] {
			delete(c.fitsSince, uid)
		}
	}
}

// faultsOver starts the (F) clock.
func (c *checker) faultsOver(at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.faultOver = at
}

// longestFitting is the longest a fitting Workload waited after the faults.
func (c *checker) longestFitting() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.longestFit
}

// watchWorkloads follows every version of the namespace's Workloads,
// resuming from the last one seen when the watch breaks (the API server
// restarting is a drill).
func (c *checker) watchWorkloads(ctx context.Context) {
	wc, err := client.NewWithWatch(c.d.dev.RestConfig, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		c.violate("watching Workloads: %v", err)
		return
	}
	lw := &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return wc.Watch(ctx, &kueue.WorkloadList{}, client.InNamespace(c.namespace), &client.ListOptions{Raw: &opts})
		},
	}
	for ctx.Err() == nil {
		// List, then follow from the list's version; a watch that cannot
		// resume (its version is gone) starts over with a list.
		list := &kueue.WorkloadList{}
		if err := wc.List(ctx, list, client.InNamespace(c.namespace)); err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		for i := range list.Items {
			c.observe(&list.Items[i])
		}
		w, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, lw)
		if err != nil {
			c.violate("watching Workloads: %v", err)
			return
		}
		c.follow(ctx, w)
		w.Stop()
	}
}

// follow observes a watch's events until it ends.
func (c *checker) follow(ctx context.Context, w watch.Interface) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok || ev.Type == watch.Error {
				return
			}
			if wl, isWorkload := ev.Object.(*kueue.Workload); isWorkload {
				c.observe(wl)
			}
		}
	}
}

// observe counts admissions and evictions from consecutive versions.
func (c *checker) observe(wl *kueue.Workload) {
	c.mu.Lock()
	defer c.mu.Unlock()
	uid := wl.UID
	c.names[uid] = wl.Name
	if ev := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted); ev != nil && ev.Status == metav1.ConditionTrue &&
		!ev.LastTransitionTime.Equal(ptrTime(c.evictedAt[uid])) {
		c.evictions[uid]++
		c.evictedAt[uid] = ev.LastTransitionTime
	}
	now := workload.HasQuotaReservation(wl)
	if now && !c.reserved[uid] {
		c.admissions[uid]++
		c.admittedAt[uid] = time.Now()
		if c.admissions[uid] > c.evictions[uid]+1 && len(c.violations) < 50 {
			c.violations = append(c.violations, fmt.Sprintf("%s (E) Workload %s admitted %d times, evicted %d times",
				time.Now().Format("15:04:05.000"), wl.Name, c.admissions[uid], c.evictions[uid]))
		}
	}
	c.reserved[uid] = now
}

func ptrTime(t metav1.Time) *metav1.Time { return &t }

// admittedAfter says when each Workload was last admitted, by name.
func (c *checker) admissionTimes() map[string]time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]time.Time{}
	for uid, at := range c.admittedAt {
		out[c.names[uid]] = at
	}
	return out
}

// result fails the test on any violation and says what was checked.
func (c *checker) result() (checks, admissions, evictions int, violations []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.admissions {
		admissions += n
	}
	for _, n := range c.evictions {
		evictions += n
	}
	return c.checks, admissions, evictions, append([]string(nil), c.violations...)
}

// noFinalizersLeft deletes the namespace's Jobs and checks (Z): their
// Workloads and pods all go, none held by a finalizer.
func (d *drillCluster) noFinalizersLeft(namespace string) error {
	ctx, cancel := context.WithTimeout(d.ctx, 2*time.Minute)
	defer cancel()
	bg := metav1.DeletePropagationBackground
	if err := d.client.DeleteAllOf(ctx, &batchv1.Job{}, client.InNamespace(namespace), client.PropagationPolicy(bg)); err != nil {
		return fmt.Errorf("deleting the Jobs: %w", err)
	}
	var left []string
	for ctx.Err() == nil {
		left = left[:0]
		for _, list := range []client.ObjectList{&kueue.WorkloadList{}, &corev1.PodList{}, &batchv1.JobList{}} {
			if err := d.client.List(ctx, list, client.InNamespace(namespace)); err != nil {
				continue
			}
			_ = meta.EachListItem(list, func(o runtime.Object) error {
				obj := o.(client.Object)
				left = append(left, fmt.Sprintf("%T %s finalizers %v", obj, obj.GetName(), obj.GetFinalizers()))
				return nil
			})
		}
		if len(left) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	if len(left) > 5 {
		left = append(left[:5], fmt.Sprintf("and %d more", len(left)-5))
	}
	return fmt.Errorf("(Z) objects left 2 minutes after their Jobs were deleted: %v", left)
}
