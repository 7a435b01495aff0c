package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/workload"
)

// finishWriters bounds the Finished writes in flight; waiting for a slot
// counts in the finish lag, so a slow mimic shows in the report.
const finishWriters = 64

// tracker follows the scenario's Workloads through a watch: when each was
// requested, admitted, evicted and finished. It is also the execution mimic:
// a timer marks a Workload Finished its runtime after its admission was
// observed, and an evicted Workload runs again in full when re-admitted.
type tracker struct {
	plan  []PlannedWorkload
	index map[string]int
	// finish writes a Workload's Finished condition.
	finish func(ctx context.Context, name string) error
	slots  chan struct{}
	// retryDelay grows linearly between the attempts of a Finished write.
	retryDelay time.Duration

	mu   sync.Mutex
	runs []workloadRun

	created, admitted, finished, finishWrites atomic.Int64
	allFinished                               chan struct{}
	failed                                    chan error
}

// workloadRun is what the tracker saw of one Workload.
type workloadRun struct {
	requestedAt, admittedAt, finishedAt time.Time
	finishLag                           time.Duration
	evictions                           int
	// running is set from an observed admission until the eviction or the
	// Finished write; generation tells a stale timer from the current one.
	running    bool
	generation int
	timer      *time.Timer
	// finishing is set once a timer started the Finished write: a later
	// run's timer must not append a second Finished condition (the API
	// refuses a duplicate) while that write is in flight.
	finishing bool
	// inUse are the spans the Workload held quota, as seen by the tracker.
	inUse []span
}

type span struct{ from, to time.Time }

func newTracker(plan []PlannedWorkload, finish func(ctx context.Context, name string) error) *tracker {
	t := &tracker{
		plan: plan, index: make(map[string]int, len(plan)), finish: finish,
		slots: make(chan struct{}, finishWriters), retryDelay: 100 * time.Millisecond, runs: make([]workloadRun, len(plan)),
		allFinished: make(chan struct{}), failed: make(chan error, 1),
	}
	for i, w := range plan {
		t.index[w.Name] = i
	}
	return t
}

// requested records that the creation of plan[i] is being sent.
func (t *tracker) requested(i int, at time.Time) {
	t.mu.Lock()
	t.runs[i].requestedAt = at
	t.mu.Unlock()
}

// handler feeds the tracker from a Workload informer; ctx bounds the
// Finished writes it starts.
func (t *tracker) handler(ctx context.Context) toolscache.ResourceEventHandler {
	observe := func(obj any) {
		if wl, ok := obj.(*kueue.Workload); ok {
			t.observe(ctx, wl, time.Now())
		}
	}
	return toolscache.ResourceEventHandlerFuncs{AddFunc: observe, UpdateFunc: func(_, obj any) { observe(obj) }}
}

func (t *tracker) observe(ctx context.Context, wl *kueue.Workload, now time.Time) {
	i, ok := t.index[wl.Name]
	if !ok || workload.IsFinished(wl) {
		return
	}
	admitted := workload.IsAdmitted(wl)
	t.mu.Lock()
	defer t.mu.Unlock()
	r := &t.runs[i]
	switch {
	case admitted && !r.running && r.finishedAt.IsZero():
		if r.admittedAt.IsZero() {
			r.admittedAt = now
			t.admitted.Add(1)
		}
		r.running = true
		r.generation++
		r.inUse = append(r.inUse, span{from: now})
		due, generation := now.Add(t.plan[i].Runtime), r.generation
		r.timer = time.AfterFunc(t.plan[i].Runtime, func() { t.finishRun(ctx, i, generation, due) })
	case !admitted && r.running:
		r.timer.Stop()
		r.running = false
		r.evictions++
		r.inUse[len(r.inUse)-1].to = now
	}
}

// finishRun writes the Finished condition of plan[i] if the run that
// armed the timer is still the current one.
func (t *tracker) finishRun(ctx context.Context, i, generation int, due time.Time) {
	select {
	case t.slots <- struct{}{}:
	case <-ctx.Done():
		return
	}
	defer func() { <-t.slots }()
	t.mu.Lock()
	current := t.runs[i].running && t.runs[i].generation == generation && !t.runs[i].finishing
	if current {
		t.runs[i].finishing = true
	}
	t.mu.Unlock()
	if !current {
		return
	}
	var err error
	for attempt := range 5 {
		t.finishWrites.Add(1)
		if err = t.finish(ctx, t.plan[i].Name); err == nil || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Duration(attempt+1) * t.retryDelay) // backoff between retries, not a synchronization
	}
	if err != nil {
		t.fail(fmt.Errorf("marking %s Finished: %w", t.plan[i].Name, err))
		return
	}
	landed := time.Now()
	t.mu.Lock()
	r := &t.runs[i]
	r.running = false
	r.finishedAt = landed
	r.finishLag = landed.Sub(due)
	r.inUse[len(r.inUse)-1].to = landed
	t.mu.Unlock()
	if t.finished.Add(1) == int64(len(t.plan)) {
		close(t.allFinished)
	}
}

func (t *tracker) fail(err error) {
	select {
	case t.failed <- err:
	default:
	}
}

// stop cancels the timers still armed.
func (t *tracker) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range t.runs {
		if t.runs[i].timer != nil {
			t.runs[i].timer.Stop()
		}
	}
}

// snapshot copies the runs for the report.
func (t *tracker) snapshot() []workloadRun {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]workloadRun, len(t.runs))
	copy(out, t.runs)
	for i := range out {
		out[i].inUse = append([]span(nil), out[i].inUse...)
	}
	return out
}

// finishByPatch returns the mimic's write: one JSON patch that appends the
// Finished condition, so it never conflicts with the manager's writes.
func finishByPatch(c client.Client, ns string) func(ctx context.Context, name string) error {
	return func(ctx context.Context, name string) error {
		patch := fmt.Sprintf(`[{"op":"add","path":"/status/conditions/-","value":{"type":%q,"status":"True","reason":"Succeeded","message":"finished by sluice bench","lastTransitionTime":%q}}]`,
			kueue.WorkloadFinished, metav1.Now().UTC().Format(time.RFC3339))
		wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		err := c.Status().Patch(ctx, wl, client.RawPatch(types.JSONPatchType, []byte(patch)))
		if apierrors.IsNotFound(err) {
			return errors.New("the Workload is gone")
		}
		return err
	}
}
