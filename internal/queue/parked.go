package queue

import (
	"container/heap"

	"github.com/sluicehq/sluice/internal/workload"
)

// parkedShapes are the workloads parked in one ClusterQueue, by shape, each
// shape in the queue's order. Quota freed in a cohort can only let in, of
// each shape, the first that waits: the ones behind it ask for the same and
// come after it. So a release requeues one workload per shape, and an
// admission the next of its shape, instead of the whole backlog.
type parkedShapes map[string]*shapeQueue

func (p parkedShapes) push(info *workload.Info) {
	q := p[info.Shape]
	if q == nil {
		q = &shapeQueue{at: map[string]int{}}
		p[info.Shape] = q
	}
	heap.Push(q, info)
}

// remove drops key (of shape) and reports whether it was there.
func (p parkedShapes) remove(key, shape string) bool {
	q := p[shape]
	if q == nil {
		return false
	}
	i, ok := q.at[key]
	if !ok {
		return false
	}
	heap.Remove(q, i)
	if q.Len() == 0 {
		delete(p, shape)
	}
	return true
}

// replace puts a newer version of a parked workload in place: same spec
// and queue time, so the same place.
func (p parkedShapes) replace(info *workload.Info) {
	if q := p[info.Shape]; q != nil {
		if i, ok := q.at[info.Key]; ok {
			q.items[i] = info
		}
	}
}

// popFirst removes and returns the first workload of shape, if any.
func (p parkedShapes) popFirst(shape string) (*workload.Info, bool) {
	q := p[shape]
	if q == nil {
		return nil, false
	}
	info := heap.Pop(q).(*workload.Info)
	if q.Len() == 0 {
		delete(p, shape)
	}
	return info, true
}

// shapeQueue is a heap in the queue's order (Less) that knows where each
// workload is, so that any one can be removed.
type shapeQueue struct {
	items []*workload.Info
	at    map[string]int
}

func (q *shapeQueue) Len() int           { return len(q.items) }
func (q *shapeQueue) Less(i, j int) bool { return Less(q.items[i], q.items[j]) }
func (q *shapeQueue) Swap(i, j int) {
	q.items[i], q.items[j] = q.items[j], q.items[i]
	q.at[q.items[i].Key] = i
	q.at[q.items[j].Key] = j
}
func (q *shapeQueue) Push(x any) {
	info := x.(*workload.Info)
	q.at[info.Key] = len(q.items)
	q.items = append(q.items, info)
}
func (q *shapeQueue) Pop() any {
	last := q.items[len(q.items)-1]
	q.items = q.items[:len(q.items)-1]
	delete(q.at, last.Key)
	return last
}
