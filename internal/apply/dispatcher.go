package apply

import (
	"context"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// Class orders writes: urgent ones (admissions, preemptions, evictions, the
// re-reads that settle an unknown outcome) always go before background ones
// (pending verdicts, queue status). On a busy API server the verdicts of
// thousands of waiting workloads would otherwise hold back the admissions
// that drain the queue.
type Class int

const (
	Background Class = iota
	Urgent
)

// Outcome is what a write reports: done, or to be tried again after the
// object's backoff.
type Outcome int

const (
	Done Outcome = iota
	Retry
)

// Write is one intended status write of one object. Run reads what it
// needs, skips the write when the object already says it, and writes; the
// dispatcher never runs two writes of one object at once.
type Write struct {
	// Object names the object written (kind/namespace/name): the unit of
	// ordering, merging and backoff.
	Object string
	// Kind names what is written (admission, pending, preemption...): a
	// queued write of the same Object and Kind is replaced by a later one.
	Kind  string
	Class Class
	// Delay holds the object's writes back for that long first (a write
	// that must wait out a failure made elsewhere).
	Delay time.Duration
	Run   func(ctx context.Context) Outcome
	// Dropped, when set, is told that the write will not be made: an
	// urgent write of the admitter made it moot, or the dispatcher stopped
	// (not when a newer write of its kind replaced it).
	Dropped func()
	// waited: a caller waits for this write (Do); it is never merged
	// away and makes no other write moot.
	waited bool
}

// Dispatcher is the one way sluice's status writes reach the API server:
//   - at most one write of an object is in flight, and its later intents wait
//     behind it, a newer one of the same kind replacing the queued one; an
//     urgent write of an object drops its queued background writes (an
//     admission makes its pending verdict moot);
//   - bounded workers, of which at most BackgroundWorkers write background
//     writes;
//   - a write that fails is retried after the object's exponential backoff
//     (client-go's per-item limiter, on the injected clock), so a write that
//     always fails (a webhook that is down) costs a trickle, not a storm;
//   - writes run only while Fence allows (the lease is held), with the
//     fence's deadline on their context;
//   - Stop drains the urgent writes already queued, within a bound, and
//     drops the rest: the next leader decides again.
//
// Adding never blocks.
type Dispatcher struct {
	clock             Clock
	backoff           workqueue.TypedRateLimiter[string]
	workers           int
	backgroundWorkers int
	fence             Fence

	mu      sync.Mutex
	cond    *sync.Cond
	objects map[string]*queuedObject
	// ready lists objects ready to write by class, oldest first; entries
	// whose object is no longer ready in that class are skipped.
	ready              [2][]string
	backgroundInFlight int
	inFlight           int
	// arming counts backoff timers decided under mu but armed after it is
	// released (a fake clock runs a timer's function under its own lock as
	// it steps, so arming under mu could deadlock): until armed, the
	// dispatcher is not idle, or a test stepping the clock could miss it.
	arming            int
	stopping, stopped bool
	wg                sync.WaitGroup
}

// queuedObject is an object's queued writes, in order.
type queuedObject struct {
	writes   []Write
	inFlight bool
	// backingOff: a write failed; the object is ready again at a timer.
	backingOff bool
	// readyIn is the class whose ready list holds the object, or -1.
	readyIn Class
}

// Fence tells whether writes may be made now and until when; a manager that
// is not (or no longer surely) the leader must not write.
type Fence interface {
	WritableUntil() (time.Time, bool)
}

// Unfenced allows writes at any time (no leader election).
type Unfenced struct{}

func (Unfenced) WritableUntil() (time.Time, bool) { return time.Time{}, true }

// DispatcherOptions size a Dispatcher.
type DispatcherOptions struct {
	Workers           int
	BackgroundWorkers int
	// BaseBackoff and MaxBackoff bound the per-object backoff after a failed
	// write.
	BaseBackoff, MaxBackoff time.Duration
	Fence                   Fence
	Clock                   Clock
}

// NewDispatcher makes a Dispatcher; Start runs its workers.
func NewDispatcher(o DispatcherOptions) *Dispatcher {
	if o.Fence == nil {
		o.Fence = Unfenced{}
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.BaseBackoff <= 0 {
		o.BaseBackoff = 100 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = time.Minute
	}
	d := &Dispatcher{
		clock:             o.Clock,
		backoff:           workqueue.NewTypedItemExponentialFailureRateLimiter[string](o.BaseBackoff, o.MaxBackoff),
		workers:           max(1, o.Workers),
		backgroundWorkers: min(max(1, o.BackgroundWorkers), max(1, o.Workers)),
		fence:             o.Fence,
		objects:           map[string]*queuedObject{},
	}
	d.cond = sync.NewCond(&d.mu)
	return d
}

// Add queues a write.
func (d *Dispatcher) Add(w Write) {
	d.mu.Lock()
	if d.stopped {
		d.mu.Unlock()
		w.drop()
		return
	}
	o := d.objects[w.Object]
	if o == nil {
		o = &queuedObject{readyIn: -1}
		d.objects[w.Object] = o
	}
	o.writes = merge(o.writes, w)
	if w.Delay > 0 && !o.backingOff {
		o.backingOff = true
		d.arming++
		d.mu.Unlock()
		d.releaseAfter(w.Object, o, w.Delay)
		return
	}
	d.makeReady(w.Object, o)
	d.mu.Unlock()
}

// releaseAfter makes a backing-off object ready again after delay. The
// caller does not hold mu (a fake clock runs the function as it steps) and
// counted the timer in arming.
func (d *Dispatcher) releaseAfter(key string, o *queuedObject, delay time.Duration) {
	d.clock.AfterFunc(delay, func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		o.backingOff = false
		if d.objects[key] == o {
			d.makeReady(key, o)
		}
	})
	d.mu.Lock()
	d.arming--
	d.mu.Unlock()
}

// merge adds w to an object's queued writes: it replaces a queued write of
// the same kind, and an urgent write of the admitter drops the background ones.
func merge(queued []Write, w Write) []Write {
	out := queued[:0]
	for _, q := range queued {
		switch {
		case q.waited:
		case q.Kind == w.Kind:
			continue
		case w.makesBackgroundMoot() && q.Class == Background:
			q.drop()
			continue
		}
		out = append(out, q)
	}
	if w.Class == Background && slices.ContainsFunc(out, Write.makesBackgroundMoot) {
		w.drop()
		return out
	}
	return append(out, w)
}

func hasUrgent(ws []Write) bool {
	for _, w := range ws {
		if w.Class == Urgent {
			return true
		}
	}
	return false
}

// classOf is the class an object's writes are served in: urgent if any is.
func classOf(ws []Write) Class {
	if hasUrgent(ws) {
		return Urgent
	}
	return Background
}

// makeReady lists an object that has writes and may be written. The
// caller holds mu.
func (d *Dispatcher) makeReady(key string, o *queuedObject) {
	if len(o.writes) == 0 {
		if !o.inFlight && !o.backingOff {
			delete(d.objects, key)
		}
		return
	}
	if o.inFlight || o.backingOff {
		return
	}
	class := classOf(o.writes)
	if o.readyIn == class {
		return
	}
	o.readyIn = class
	d.ready[class] = append(d.ready[class], key)
	d.cond.Signal()
}

// Start runs the workers until Stop.
func (d *Dispatcher) Start(ctx context.Context) {
	for range d.workers {
		d.wg.Go(func() {
			for {
				key, w, ok := d.next()
				if !ok {
					return
				}
				d.run(ctx, key, w)
			}
		})
	}
}

// Stop lets the workers write the urgent writes queued (not retrying
// failures) and returns once they are done or after wait; the writes then
// in flight are cancelled.
func (d *Dispatcher) Stop(cancel context.CancelFunc, wait time.Duration) {
	d.mu.Lock()
	d.stopping = true
	d.cond.Broadcast()
	d.mu.Unlock()
	done := make(chan struct{})
	go func() { d.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-d.clock.After(wait):
		cancel()
		<-done
	}
	d.mu.Lock()
	d.stopped = true
	left := d.objects
	d.objects = map[string]*queuedObject{}
	d.mu.Unlock()
	for _, o := range left {
		for _, w := range o.writes {
			w.drop()
		}
	}
}

// makesBackgroundMoot tells an urgent write of the admitter (an admission,
// preemption, eviction or recheck): it makes the object's queued pending
// verdict moot. A reconciler's waited write (Do) does not: the verdict
// still has to be written after it, and dropping it would lose it, as the
// Verdicts remember it as sent.
func (w Write) makesBackgroundMoot() bool { return w.Class == Urgent && !w.waited }

// drop tells a waiting caller its write will not be made.
func (w Write) drop() {
	if w.Dropped != nil {
		w.Dropped()
	}
}

// next blocks until a write may be made; ok is false once stopping and no
// urgent write is ready.
func (d *Dispatcher) next() (string, Write, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for {
		if key, w, found := d.takeNext(); found {
			return key, w, true
		}
		if d.stopping {
			return "", Write{}, false
		}
		d.cond.Wait()
	}
}

// takeNext takes the write to make now, urgent first, within the bound on
// background writes (none once stopping). The caller holds mu.
func (d *Dispatcher) takeNext() (string, Write, bool) {
	if key, w, found := d.take(Urgent); found {
		return key, w, true
	}
	if !d.stopping && d.backgroundInFlight < d.backgroundWorkers {
		if key, w, found := d.take(Background); found {
			d.backgroundInFlight++
			return key, w, true
		}
	}
	return "", Write{}, false
}

// take pops the oldest ready object of a class and its first write. The
// caller holds mu.
func (d *Dispatcher) take(class Class) (string, Write, bool) {
	for len(d.ready[class]) > 0 {
		key := d.ready[class][0]
		d.ready[class] = d.ready[class][1:]
		o := d.objects[key]
		if o == nil || o.readyIn != class {
			continue
		}
		o.readyIn = -1
		if o.inFlight || o.backingOff || len(o.writes) == 0 {
			continue
		}
		w := o.writes[0]
		if class == Urgent && w.Class != Urgent {
			// An urgent write is queued behind a background one that
			// survived the merge (it was in flight then): it goes first.
			for i, q := range o.writes {
				if q.Class == Urgent {
					w = q
					o.writes = append(o.writes[:i:i], o.writes[i+1:]...)
					o.writes = append([]Write{w}, o.writes...)
					break
				}
			}
		}
		o.writes = o.writes[1:]
		o.inFlight = true
		d.inFlight++
		return key, w, true
	}
	return "", Write{}, false
}

// run makes one write within the fence and files its outcome. The
// manager's client is fenced too; asking here first spares the reads a
// write makes before it, and counts the write as fenced rather than failed.
func (d *Dispatcher) run(ctx context.Context, key string, w Write) {
	outcome := Retry
	if until, ok := d.fence.WritableUntil(); ok {
		writeCtx, cancel := ctx, context.CancelFunc(func() {})
		if !until.IsZero() {
			writeCtx, cancel = context.WithDeadline(ctx, until)
		}
		outcome = w.Run(writeCtx)
		cancel()
	} else {
		writesTotal.WithLabelValues(w.Kind, "fenced").Inc()
	}
	d.finish(key, w, outcome)
}

// finish files a write's outcome: a failed write goes back to the front of
// its object's writes (unless a newer one of its kind replaced it) and the
// object waits its backoff.
func (d *Dispatcher) finish(key string, w Write, outcome Outcome) {
	if o, delay := d.file(key, w, outcome); o != nil {
		d.releaseAfter(key, o, delay)
	}
}

// file is finish under mu; it returns the backoff the object must wait.
func (d *Dispatcher) file(key string, w Write, outcome Outcome) (*queuedObject, time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	o := d.objects[key]
	d.inFlight--
	if w.Class == Background {
		d.backgroundInFlight--
	}
	d.cond.Broadcast()
	if outcome != Done && (o == nil || d.stopping) {
		w.drop() // not retried once stopping
	}
	if o == nil {
		return nil, 0
	}
	o.inFlight = false
	if outcome == Done || d.stopping {
		// A write that went through ends the object's run of failures: the
		// next failure starts from the base backoff again.
		d.backoff.Forget(key)
		d.makeReady(key, o)
		return nil, 0
	}
	newer, moot := false, false
	for _, q := range o.writes {
		newer = newer || q.Kind == w.Kind
		moot = moot || (q.makesBackgroundMoot() && w.Class == Background)
	}
	switch {
	case w.waited: // its caller waits for this one
		o.writes = append([]Write{w}, o.writes...)
	case newer:
	case moot:
		w.drop()
	default:
		o.writes = append([]Write{w}, o.writes...)
	}
	o.backingOff = true
	d.arming++
	return o, d.backoff.When(key)
}

// Len is how many objects have writes queued or in flight.
func (d *Dispatcher) Len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.objects)
}

// Clock is the one clock the apply layer reads: tests drive it.
type Clock interface {
	clock.WithTicker
	AfterFunc(d time.Duration, f func()) clock.Timer
}

// Idle tells whether no write is in flight or ready to be made now (writes
// waiting out a backoff may remain).
func (d *Dispatcher) Idle() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.inFlight > 0 || d.arming > 0 {
		return false
	}
	for _, o := range d.objects {
		if len(o.writes) > 0 && !o.backingOff {
			return false
		}
	}
	return true
}
