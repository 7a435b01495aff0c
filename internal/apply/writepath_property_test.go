package apply

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/apis/scheme"
	"github.com/sluicehq/sluice/internal/workload"
)

// TestWritePathProperties drives the real write path (Admitter cycles,
// Workloads writes, the Dispatcher's queue, the Tracker) against a fake API
// whose every call is held until a random step commits it and, later,
// answers it (or loses the answer), with a watch that delivers versions
// late, skips some and repeats others, and random quota changes, foreign
// writes, finished jobs, Workloads deleted and created again under the same
// name, and leader changes in between. After every step
// the cache must charge every workload the API holds reserved; once quiet,
// exactly those. SLUICE_WRITEPATH_SEEDS and SLUICE_WRITEPATH_STEPS make it
// bigger (make bench-properties).
func TestWritePathProperties(t *testing.T) {
	seeds, steps := envInt("SLUICE_WRITEPATH_SEEDS", 40), envInt("SLUICE_WRITEPATH_STEPS", 400)
	for seed := range seeds {
		t.Run(fmt.Sprintf("seed-%d", seed), func(t *testing.T) {
			s := newWritePathSim(t, uint64(seed))
			for step := range steps {
				what := s.step()
				if err := s.charged(); err != nil {
					t.Fatalf("step %d (%s): %v\nsteps so far:\n%s", step, what, err, s.trail())
				}
			}
			s.quiet()
			if err := s.exact(); err != nil {
				t.Fatalf("once quiet: %v\nsteps:\n%s", err, s.trail())
			}
		})
	}
}

func envInt(name string, fallback int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return fallback
}

// heldCall is one API call of the write path, held by the fake API.
type heldCall struct {
	patch     bool
	name      string
	obj       client.Object
	p         client.Patch
	committed bool
	// result and after are what the call did once committed.
	result error
	after  *kueue.Workload
	reply  chan heldReply
	run    *runningWrite
}

type heldReply struct {
	err   error
	after *kueue.Workload
}

// runningWrite is a write the sim took from the Dispatcher and runs on a
// goroutine of its own: it is either held in a call or done.
type runningWrite struct {
	write Write
}

type writePathSim struct {
	t     *testing.T
	ctx   context.Context
	rng   *rand.Rand
	clk   *clocktesting.FakeClock
	store client.WithWatch // the API server's state, unheld
	api   client.Client    // what the write path calls: every Workload call held
	names []string

	tracker    *Tracker
	admitter   *Admitter
	dispatcher *Dispatcher
	running    []*runningWrite
	calls      []*heldCall
	// events carries the running write's next call, or nil at its end.
	events chan *heldCall
	// history is every version of each Workload the API made, in order;
	// delivered is how far the watch has shown each.
	history   map[string][]*kueue.Workload
	delivered map[string]int
	log       []string
}

func newWritePathSim(t *testing.T, seed uint64) *writePathSim {
	s := &writePathSim{t: t, ctx: context.Background(), rng: rand.New(rand.NewPCG(seed, 37)),
		clk:     clocktesting.NewFakeClock(time.Unix(100_000, 0)),
		store:   fake.NewClientBuilder().WithScheme(scheme.Scheme).WithStatusSubresource(&kueue.Workload{}).Build(),
		history: map[string][]*kueue.Workload{}, delivered: map[string]int{}, events: make(chan *heldCall)}
	s.api = interceptor.NewClient(s.store, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*kueue.Workload); !ok {
				return c.Get(ctx, key, obj, opts...)
			}
			return s.hold(&heldCall{name: key.Name, obj: obj})
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			return s.hold(&heldCall{patch: true, name: obj.GetName(), obj: obj, p: patch})
		},
	})
	for i := range 4 {
		name := fmt.Sprintf("w%d", i)
		s.names = append(s.names, name)
		wl := pendingWorkload(name, int32(i%2))
		if err := s.store.Create(s.ctx, wl); err != nil {
			t.Fatal(err)
		}
		s.recordVersion(wl)
	}
	s.newLeader(false)
	return s
}

// hold parks a call of the running write until the sim answers it. Only
// one write's goroutine runs at a time: the sim resumes one and waits for
// its next call, or its end.
func (s *writePathSim) hold(c *heldCall) error {
	c.reply = make(chan heldReply)
	s.events <- c
	reply := <-c.reply
	if reply.after != nil {
		if wl, ok := c.obj.(*kueue.Workload); ok {
			reply.after.DeepCopyInto(wl)
		}
	}
	return reply.err
}

// resume lets write r run (started, or a call of it answered by
// resumeIt) until its next call or its end.
func (s *writePathSim) resume(r *runningWrite, resumeIt func()) {
	resumeIt()
	c := <-s.events
	if c == nil {
		s.running = slices.DeleteFunc(s.running, func(o *runningWrite) bool { return o == r })
		return
	}
	c.run = r
	s.calls = append(s.calls, c)
}

// newLeader starts a manager that becomes the leader: a fresh Tracker
// rebuilt from the API, and a watch that starts behind (lagging) when
// lagging is set. Calls of the old leader are answered first, any way: its
// fence closed before the new leader could take the lease (see
// docs/reliability.md), so none lands after the new leader's list.
func (s *writePathSim) newLeader(lagging bool) {
	for len(s.calls) > 0 {
		s.answer(s.calls[0], s.rng.IntN(3) == 0)
	}
	s.running = nil
	s.tracker = NewTracker()
	s.dispatcher = NewDispatcher(DispatcherOptions{Workers: 4, BackgroundWorkers: 1, Clock: s.clk})
	wls := &Workloads{Client: s.api, APIReader: s.api, Tracker: s.tracker, Dispatcher: s.dispatcher, Clock: s.clk}
	s.admitter = &Admitter{Client: s.store, Tracker: s.tracker, Workloads: wls, Dispatcher: s.dispatcher, Clock: s.clk,
		Verdicts: &Verdicts{Workloads: wls, Refresh: 5 * time.Second}}
	s.tracker.SetFlavor(&kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "default"}})
	s.tracker.SetClusterQueue(clusterQueue(strconv.Itoa(1+s.rng.IntN(3)), nil), metav1.Condition{Status: metav1.ConditionTrue})
	s.tracker.SetLocalQueue(&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "lq"}, Spec: kueue.LocalQueueSpec{ClusterQueue: "cq"}})
	s.tracker.SetNamespace("ns", nil)
	if err := s.admitter.rebuild(s.ctx); err != nil {
		s.t.Fatal(err)
	}
	for _, name := range s.names {
		if lagging {
			// A new watch starts after the last deletion: it lists the
			// Workload there now, never an earlier one of its name.
			s.delivered[name] = max(s.rng.IntN(len(s.history[name])+1), lastDeletion(s.history[name])+1)
		} else {
			s.delivered[name] = len(s.history[name])
		}
	}
}

func (s *writePathSim) recordVersion(wl *kueue.Workload) {
	s.history[wl.Name] = append(s.history[wl.Name], wl.DeepCopy())
}

// step makes one random move and says what it was.
func (s *writePathSim) step() string {
	var what string
	switch n := s.rng.IntN(100); {
	case n < 12:
		s.admitter.cycle(s.ctx)
		what = "cycle"
	case n < 30:
		what = s.startWrite()
	case n < 48 && len(s.calls) > 0:
		what = s.commit(s.pick())
	case n < 66 && len(s.calls) > 0:
		c := s.pick()
		what = fmt.Sprintf("answer %s", describe(c))
		s.answer(c, s.rng.IntN(5) == 0)
	case n < 84:
		what = s.watch()
	case n < 87:
		what = s.foreignWrite()
	case n < 88:
		what = s.recreate()
	case n < 91:
		s.tracker.SetClusterQueue(clusterQueue(strconv.Itoa(1+s.rng.IntN(3)), nil), metav1.Condition{Status: metav1.ConditionTrue})
		what = "quota change"
	case n < 98:
		d := time.Duration(s.rng.IntN(3000)) * time.Millisecond
		s.clk.Step(d)
		what = "clock +" + d.String()
	case n < 99:
		s.newLeader(s.rng.IntN(2) == 0)
		what = "leader change"
	default:
		what = "nothing"
	}
	s.log = append(s.log, what)
	return what
}

func (s *writePathSim) pick() *heldCall { return s.calls[s.rng.IntN(len(s.calls))] }

func describe(c *heldCall) string {
	kind := "get"
	if c.patch {
		kind = "patch"
	}
	return fmt.Sprintf("%s %s of %s (committed %v)", kind, c.name, c.run.write.Kind, c.committed)
}

// startWrite takes the next write the Dispatcher would make and runs it
// until its first call (or its end).
func (s *writePathSim) startWrite() string {
	s.dispatcher.mu.Lock()
	key, w, ok := s.dispatcher.takeNext()
	s.dispatcher.mu.Unlock()
	if !ok {
		return "no write ready"
	}
	r := &runningWrite{write: w}
	s.running = append(s.running, r)
	d := s.dispatcher
	s.resume(r, func() {
		go func() {
			d.finish(key, w, w.Run(s.ctx))
			s.events <- nil
		}()
	})
	return "start " + w.Kind + " of " + key
}

// commit makes a held call happen in the API, without answering it yet: a
// patch lands (or conflicts), a read takes the version there now.
func (s *writePathSim) commit(c *heldCall) string {
	if c.committed {
		return "commit (already) " + describe(c)
	}
	c.committed = true
	wl := c.obj.(*kueue.Workload).DeepCopy()
	if c.patch {
		c.result = s.store.Status().Patch(s.ctx, wl, c.p)
		if c.result == nil {
			s.recordVersion(wl)
		}
	} else {
		c.result = s.store.Get(s.ctx, client.ObjectKey{Namespace: "ns", Name: c.name}, wl)
	}
	if c.result == nil {
		c.after = wl
	}
	return "commit " + describe(c)
}

// answer answers a held call: committed, with what it did, or its answer
// lost; not committed, with a failure (nothing happened) or, its answer
// lost, committed first half of the time.
func (s *writePathSim) answer(c *heldCall, lose bool) {
	s.calls = slices.DeleteFunc(s.calls, func(o *heldCall) bool { return o == c })
	reply := heldReply{}
	switch {
	case lose:
		if !c.committed && s.rng.IntN(2) == 0 {
			s.commit(c)
		}
		reply.err = apierrors.NewTimeoutError("the answer was lost", 1)
	case c.committed:
		reply = heldReply{err: c.result, after: c.after}
	default:
		reply.err = apierrors.NewServiceUnavailable("the API server failed the call")
	}
	s.resume(c.run, func() { c.reply <- reply })
}

// watch delivers a version of one Workload: the next one, a later one
// (skipping some, as a watch that relists does), or the last one again.
func (s *writePathSim) watch() string {
	name := s.names[s.rng.IntN(len(s.names))]
	versions, next := s.history[name], s.delivered[name]
	switch {
	case next < len(versions) && s.rng.IntN(4) == 0:
		next += s.rng.IntN(len(versions) - next)
	case next < len(versions):
	case next > 0:
		next-- // a repeat
	default:
		return "watch: nothing for " + name
	}
	s.delivered[name] = max(s.delivered[name], next+1)
	if isDeletion(versions[next]) {
		if next+1 < s.delivered[name] {
			return "watch: nothing for " + name // a watch never repeats a deletion
		}
		s.tracker.Deleted("ns/"+name, versions[next].ResourceVersion) // the watch's delete event
		return "watch: " + name + " deleted"
	}
	wl := versions[next].DeepCopy()
	s.tracker.Observe(wl)
	return fmt.Sprintf("watch %s at %s (reserved %v)", name, wl.ResourceVersion, workload.HasQuotaReservation(wl))
}

// foreignWrite is a write sluice's write path did not make: a note in the
// status (a conflict for a write on the version before), a job that
// finishes, or a reservation cleared by someone else.
func (s *writePathSim) foreignWrite() string {
	name := s.names[s.rng.IntN(len(s.names))]
	wl := &kueue.Workload{}
	if err := s.store.Get(s.ctx, client.ObjectKey{Namespace: "ns", Name: name}, wl); err != nil {
		s.t.Fatal(err)
	}
	what := "note on " + name
	switch n := s.rng.IntN(6); {
	case n == 0 && workload.HasQuotaReservation(wl) && !workload.IsFinished(wl):
		what = "reservation of " + name + " cleared by someone else"
		wl.Status = kueue.WorkloadStatus{}
	case n == 1 && workload.HasQuotaReservation(wl):
		what = "job of " + name + " finished"
		meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: "Succeeded", Message: "done"})
	default:
		meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: "Note", Status: metav1.ConditionTrue, Reason: "Foreign",
			Message: strconv.Itoa(s.rng.IntN(1000))})
	}
	if err := s.store.Status().Update(s.ctx, wl); err != nil {
		s.t.Fatal(err)
	}
	s.recordVersion(wl)
	if workload.IsFinished(wl) {
		// Finished stays finished: the next run starts anew.
		wl.Status = kueue.WorkloadStatus{}
		if err := s.store.Status().Update(s.ctx, wl); err != nil {
			s.t.Fatal(err)
		}
		s.recordVersion(wl)
	}
	return what
}

// deletedAnnotation marks the entry of a Workload's history that stands for
// its deletion.
const deletedAnnotation = "sim.sluice.dev/deleted"

func isDeletion(wl *kueue.Workload) bool { return wl.Annotations[deletedAnnotation] != "" }

func lastDeletion(versions []*kueue.Workload) int {
	for i, v := range slices.Backward(versions) {
		if isDeletion(v) {
			return i
		}
	}
	return -1
}

// recreate deletes a Workload and creates another under the same name (a
// job deleted and submitted again): the calls held for the first one find
// the second, or nothing.
func (s *writePathSim) recreate() string {
	name := s.names[s.rng.IntN(len(s.names))]
	old := &kueue.Workload{}
	if err := s.store.Get(s.ctx, client.ObjectKey{Namespace: "ns", Name: name}, old); err != nil {
		s.t.Fatal(err)
	}
	if err := s.store.Delete(s.ctx, old); err != nil {
		s.t.Fatal(err)
	}
	gone := old.DeepCopy()
	gone.Annotations = map[string]string{deletedAnnotation: "true"}
	s.recordVersion(gone)
	renewed := pendingWorkload(name, int32(s.rng.IntN(2)))
	if err := s.store.Create(s.ctx, renewed); err != nil {
		s.t.Fatal(err)
	}
	// The fake API numbers versions per object; a real one numbers them
	// across objects (etcd revisions), so the new object's come after the
	// old one's. Writes that change nothing move it there.
	for {
		if order, _ := compareVersions(renewed.ResourceVersion, old.ResourceVersion); order > 0 {
			break
		}
		if err := s.store.Update(s.ctx, renewed); err != nil {
			s.t.Fatal(err)
		}
	}
	s.recordVersion(renewed)
	return name + " deleted and created again"
}

// quiet answers every call, makes every write, waits out every backoff and
// delivers every version: nothing is in flight anymore.
func (s *writePathSim) quiet() {
	for range 1000 {
		switch {
		case len(s.calls) > 0:
			c := s.calls[0]
			if !c.committed {
				s.commit(c)
			}
			s.answer(c, false)
		case s.startWrite() != "no write ready":
		case s.undelivered() != "":
			name := s.undelivered()
			s.delivered[name] = len(s.history[name])
			s.tracker.Observe(s.history[name][len(s.history[name])-1].DeepCopy())
		case s.dispatcher.Len() > 0:
			s.clk.Step(2 * time.Minute)
		default:
			return
		}
	}
	s.t.Fatalf("the write path did not go quiet; %d objects have writes", s.dispatcher.Len())
}

func (s *writePathSim) undelivered() string {
	for _, name := range s.names {
		if s.delivered[name] < len(s.history[name]) {
			return name
		}
	}
	return ""
}

// heldReserved are the workloads the API holds a reservation for that is
// not over.
func (s *writePathSim) heldReserved() map[string]bool {
	held := map[string]bool{}
	for _, name := range s.names {
		wl := &kueue.Workload{}
		if err := s.store.Get(s.ctx, client.ObjectKey{Namespace: "ns", Name: name}, wl); err != nil {
			s.t.Fatal(err)
		}
		held[name] = workload.HasQuotaReservation(wl) && !workload.IsFinished(wl)
	}
	return held
}

// charged: the cache charges at least what the API holds reserved.
func (s *writePathSim) charged() error {
	for name, held := range s.heldReserved() {
		if held && !s.tracker.Cache.Holds("ns/"+name) {
			return fmt.Errorf("the API holds %s reserved, the cache does not charge it (admission phase %q)", name, s.tracker.Phase("ns/"+name))
		}
	}
	return nil
}

// exact: once quiet, the cache charges exactly what the API holds.
func (s *writePathSim) exact() error {
	for name, held := range s.heldReserved() {
		if got := s.tracker.Cache.Holds("ns/" + name); got != held {
			return fmt.Errorf("%s: the API holds it reserved: %v, the cache charges it: %v (admission phase %q)", name, held, got, s.tracker.Phase("ns/"+name))
		}
	}
	return nil
}

func (s *writePathSim) trail() string {
	from := max(0, len(s.log)-60)
	out := ""
	for i, what := range s.log[from:] {
		out += fmt.Sprintf("  %d: %s\n", from+i, what)
	}
	return out
}
