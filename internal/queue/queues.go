package queue

import (
	"sync"

	"github.com/sluicehq/sluice/internal/workload"
)

// Queues holds the pending workloads. A parked workload is not handed to
// the scheduler until it is requeued: by a new version of itself, or by a
// change that may let it fit (quota freed in its cohort, a queue, cohort,
// flavor or namespace changed, its verdict due again). Parked workloads are
// kept by the ClusterQueue they were evaluated in and by shape, in the
// queue's order: quota freed in a cohort requeues the first of each shape
// of its queues, and an admission the next of its shape (parkedShapes), so
// a release costs the number of shapes, not the backlog.
type Queues struct {
	mu      sync.Mutex
	pending map[string]*workload.Info
	parked  map[string]parkedWorkload
	// parkedIn holds the parked workloads by ClusterQueue ("" for those
	// that could not be routed to one) and shape.
	parkedIn map[string]parkedShapes
	// requeues counts the requeues. A cycle evaluates a snapshot taken at
	// some count: a workload that a later requeue would have moved had it
	// been parked must not be parked with a verdict the change may have
	// voided (the change came while it was pending, so nothing would
	// requeue it again). allAt, clusterQueueAt and keyAt are the counts of
	// the last requeue of everything, of a ClusterQueue, of a workload.
	requeues       uint64
	allAt          uint64
	clusterQueueAt map[string]uint64
	keyAt          map[string]uint64
	// wake is signalled (without blocking) when there may be work.
	wake chan struct{}
}

type parkedWorkload struct {
	info         *workload.Info
	clusterQueue string
}

// New makes an empty Queues.
func New() *Queues {
	return &Queues{
		pending:        map[string]*workload.Info{},
		parked:         map[string]parkedWorkload{},
		parkedIn:       map[string]parkedShapes{},
		clusterQueueAt: map[string]uint64{},
		keyAt:          map[string]uint64{},
		wake:           make(chan struct{}, 1),
	}
}

// Wake is the channel the scheduler loop waits on.
func (m *Queues) Wake() <-chan struct{} { return m.wake }

// Signal wakes the scheduler loop.
func (m *Queues) Signal() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// AddOrUpdate queues a pending workload, or its newer version. A parked
// workload whose spec did not change (same generation: only its status was
// written, e.g. its pending reason) stays parked with the newer version;
// otherwise it is evaluated again.
func (m *Queues) AddOrUpdate(info *workload.Info) {
	m.mu.Lock()
	if p, ok := m.parked[info.Key]; ok && p.info.Obj != nil && info.Obj != nil &&
		p.info.Obj.Generation == info.Obj.Generation && p.info.QueueTime.Equal(info.QueueTime) {
		m.parked[info.Key] = parkedWorkload{info: info, clusterQueue: p.clusterQueue}
		m.parkedIn[p.clusterQueue].replace(info)
		m.mu.Unlock()
		return
	}
	m.unpark(info.Key)
	delete(m.keyAt, info.Key)
	m.pending[info.Key] = info
	m.mu.Unlock()
	m.Signal()
}

// unpark drops a workload from the parked ones; the caller holds mu.
func (m *Queues) unpark(key string) (*workload.Info, bool) {
	p, ok := m.parked[key]
	if !ok {
		return nil, false
	}
	delete(m.parked, key)
	in := m.parkedIn[p.clusterQueue]
	in.remove(key, p.info.Shape)
	if len(in) == 0 {
		delete(m.parkedIn, p.clusterQueue)
	}
	return p.info, true
}

// Delete forgets a workload (admitted, finished, deleted or deactivated).
func (m *Queues) Delete(key string) {
	m.mu.Lock()
	delete(m.pending, key)
	m.unpark(key)
	delete(m.keyAt, key)
	m.mu.Unlock()
}

// Requeues is the count of requeues so far: read it before the snapshot a
// cycle evaluates, and give it to Park.
func (m *Queues) Requeues() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.requeues
}

// Park sets a workload evaluated in clusterQueue aside until something
// changes, if it is still the version that was evaluated and nothing that
// would have requeued it happened since seen (the Requeues count the
// verdict's snapshot was taken at): then it stays pending for the next
// cycle.
func (m *Queues) Park(info *workload.Info, clusterQueue string, seen uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	current, ok := m.pending[info.Key]
	if !ok || current != info {
		return
	}
	if m.allAt > seen || m.clusterQueueAt[clusterQueue] > seen || m.keyAt[info.Key] > seen {
		return
	}
	delete(m.pending, info.Key)
	delete(m.keyAt, info.Key)
	m.parked[info.Key] = parkedWorkload{info: info, clusterQueue: clusterQueue}
	if m.parkedIn[clusterQueue] == nil {
		m.parkedIn[clusterQueue] = parkedShapes{}
	}
	m.parkedIn[clusterQueue].push(info)
}

// RequeueAll returns every parked workload to the queue (a queue, cohort,
// flavor or namespace changed).
func (m *Queues) RequeueAll() {
	m.mu.Lock()
	m.requeues++
	m.allAt = m.requeues
	for key, p := range m.parked {
		m.pending[key] = p.info
	}
	clear(m.parked)
	clear(m.parkedIn)
	m.mu.Unlock()
	m.Signal()
}

// RequeueClusterQueues returns the first parked workload of each shape of
// these ClusterQueues to the queue (quota was freed in their cohort). It
// always wakes the scheduler: a StrictFIFO head is never parked, yet the
// change may let it fit.
func (m *Queues) RequeueClusterQueues(names map[string]bool) {
	m.mu.Lock()
	m.requeues++
	for name := range names {
		m.clusterQueueAt[name] = m.requeues
		for shape := range m.parkedIn[name] {
			m.requeueFirst(name, shape)
		}
	}
	m.mu.Unlock()
	m.Signal()
}

// RequeueNext returns the next two parked workloads of a shape in a
// ClusterQueue to the queue: one of that shape was just admitted, and the
// room left may let more in. Two per admission doubles what a cycle
// evaluates while they fit, so a release that makes room for hundreds
// fills it in a handful of cycles.
func (m *Queues) RequeueNext(clusterQueue, shape string) {
	m.mu.Lock()
	moved := m.requeueFirst(clusterQueue, shape)
	moved = m.requeueFirst(clusterQueue, shape) || moved
	m.mu.Unlock()
	if moved {
		m.Signal()
	}
}

// requeueFirst moves the first parked workload of a shape to pending; the
// caller holds mu.
func (m *Queues) requeueFirst(clusterQueue, shape string) bool {
	in := m.parkedIn[clusterQueue]
	info, ok := in.popFirst(shape)
	if !ok {
		return false
	}
	if len(in) == 0 {
		delete(m.parkedIn, clusterQueue)
	}
	delete(m.parked, info.Key)
	m.pending[info.Key] = info
	return true
}

// RequeueKeys returns these workloads to the queue if they are parked (their
// verdict is due again).
func (m *Queues) RequeueKeys(keys map[string]bool) {
	m.mu.Lock()
	m.requeues++
	for key := range keys {
		if info, ok := m.unpark(key); ok {
			m.pending[key] = info
		} else if _, waiting := m.pending[key]; waiting {
			m.keyAt[key] = m.requeues
		}
	}
	m.mu.Unlock()
	m.Signal()
}

// Pending returns the workloads to evaluate, in no particular order.
func (m *Queues) Pending() []*workload.Info {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*workload.Info, 0, len(m.pending))
	for _, info := range m.pending {
		out = append(out, info)
	}
	return out
}

// Waiting returns the waiting workloads apart: those the scheduler will
// try (pending) and those parked until something they need changes.
func (m *Queues) Waiting() (pending, parked []*workload.Info) {
	m.mu.Lock()
	defer m.mu.Unlock()
	pending = make([]*workload.Info, 0, len(m.pending))
	for _, info := range m.pending {
		pending = append(pending, info)
	}
	parked = make([]*workload.Info, 0, len(m.parked))
	for _, p := range m.parked {
		parked = append(parked, p.info)
	}
	return pending, parked
}

// All returns every waiting workload, pending and parked, for status
// counts.
func (m *Queues) All() []*workload.Info {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*workload.Info, 0, len(m.pending)+len(m.parked))
	for _, info := range m.pending {
		out = append(out, info)
	}
	for _, p := range m.parked {
		out = append(out, p.info)
	}
	return out
}
