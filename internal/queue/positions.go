package queue

import (
	"slices"

	"github.com/sluicehq/sluice/internal/workload"
)

// Position is where a waiting workload stands in its ClusterQueue and in
// its LocalQueue, both from 0.
type Position struct {
	Info                         *workload.Info
	InClusterQueue, InLocalQueue int
}

// Positions orders the waiting workloads of one ClusterQueue as the
// scheduler serves them (Less: priority, queue time, name) and numbers
// each in the ClusterQueue and among those of its LocalQueue. Parked
// workloads keep their place: they are tried again in this order once
// what they wait for changes.
func Positions(waiting []*workload.Info) []Position {
	ordered := slices.Clone(waiting)
	slices.SortFunc(ordered, func(a, b *workload.Info) int {
		switch {
		case Less(a, b):
			return -1
		case Less(b, a):
			return 1
		}
		return 0
	})
	inLocalQueue := map[string]int{}
	out := make([]Position, len(ordered))
	for i, info := range ordered {
		lq := info.Namespace + "/" + info.LocalQueue
		out[i] = Position{Info: info, InClusterQueue: i, InLocalQueue: inLocalQueue[lq]}
		inLocalQueue[lq]++
	}
	return out
}
