package queue

import (
	"sync"

	"github.com/sluicehq/sluice/internal/workload"
)

// Queues holds the pending workloads. A parked workload is not handed to
// the scheduler until it is requeued: by a new version of itself, or by a
// change that may let it fit (quota freed, a queue, cohort, flavor or
// namespace changed).
type Queues struct {
	mu      sync.Mutex
	pending map[string]*workload.Info
	parked  map[string]*workload.Info
	// requeues counts the calls of RequeueParked; woken holds, for each
	// pending workload a requeue would have moved had it been parked, the
	// count at that requeue. A cycle evaluates a snapshot taken at some
	// count: a workload woken after it must not be parked with a verdict
	// the change may have voided (the change came while it was pending,
	// so nothing would requeue it again).
	requeues uint64
	woken    map[string]uint64
	// wake is signalled (without blocking) when there may be work.
	wake chan struct{}
}

// New makes an empty Queues.
func New() *Queues {
	return &Queues{
		pending: map[string]*workload.Info{},
		parked:  map[string]*workload.Info{},
		woken:   map[string]uint64{},
		wake:    make(chan struct{}, 1),
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
	if parked, ok := m.parked[info.Key]; ok && parked.Obj != nil && info.Obj != nil &&
		parked.Obj.Generation == info.Obj.Generation && parked.QueueTime.Equal(info.QueueTime) {
		m.parked[info.Key] = info
		m.mu.Unlock()
		return
	}
	delete(m.parked, info.Key)
	delete(m.woken, info.Key)
	m.pending[info.Key] = info
	m.mu.Unlock()
	m.Signal()
}

// Delete forgets a workload (admitted, finished, deleted or deactivated).
func (m *Queues) Delete(key string) {
	m.mu.Lock()
	delete(m.pending, key)
	delete(m.parked, key)
	delete(m.woken, key)
	m.mu.Unlock()
}

// Requeues is the count of requeues so far: read it before the snapshot a
// cycle evaluates, and give it to Park.
func (m *Queues) Requeues() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.requeues
}

// Park sets a workload aside until something changes, if it is still the
// version that was evaluated and nothing that would have requeued it
// happened since seen (the Requeues count the verdict's snapshot was taken
// at): then it stays pending for the next cycle.
func (m *Queues) Park(info *workload.Info, seen uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	current, ok := m.pending[info.Key]
	if !ok || current != info {
		return
	}
	if m.woken[info.Key] > seen {
		return
	}
	delete(m.pending, info.Key)
	delete(m.woken, info.Key)
	m.parked[info.Key] = info
}

// RequeueParked returns parked workloads to the queue; keep selects which
// (nil: all). It always wakes the scheduler: a StrictFIFO head is never
// parked, yet the change that called for this may let it fit.
func (m *Queues) RequeueParked(keep func(*workload.Info) bool) {
	m.mu.Lock()
	m.requeues++
	for key, info := range m.parked {
		if keep == nil || keep(info) {
			delete(m.parked, key)
			m.pending[key] = info
		}
	}
	for key, info := range m.pending {
		if keep == nil || keep(info) {
			m.woken[key] = m.requeues
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

// All returns every waiting workload, pending and parked, for status
// counts.
func (m *Queues) All() []*workload.Info {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*workload.Info, 0, len(m.pending)+len(m.parked))
	for _, info := range m.pending {
		out = append(out, info)
	}
	for _, info := range m.parked {
		out = append(out, info)
	}
	return out
}
