package scheduler

import (
	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/workload"
)

// assignPartial finds the largest admission between the podSets' minCounts
// and their counts that fits, for a workload that doesn't fit in full. Each
// podSet that allows it shrinks by the same share of its range (step k of
// steps moves every podSet k/steps of the way from its count to its
// minCount), so fit is monotone in k and a binary search finds the best.
func assignPartial(cq *ClusterQueue, flavors map[string]*kueue.ResourceFlavor, info *workload.Info) *assignment {
	steps := int32(0)
	for _, ps := range info.PodSets {
		steps = max(steps, ps.Count-ps.MinCount)
	}
	counts := func(k int32) []int32 {
		out := make([]int32, len(info.PodSets))
		for i, ps := range info.PodSets {
			// Rounded down: a podSet with a short range keeps its pods longer.
			cut := int64(ps.Count-ps.MinCount) * int64(k) / int64(steps)
			out[i] = ps.Count - int32(cut)
		}
		return out
	}
	// Smallest reduction that fits, in [1, steps]; the full count (0) failed.
	low, high := int32(1), steps
	var best *assignment
	for low <= high {
		mid := low + (high-low)/2
		if a, f := assignCounts(cq, flavors, info, counts(mid), false); f == nil {
			best, high = a, mid-1
		} else {
			low = mid + 1
		}
	}
	return best
}

func fullCounts(info *workload.Info) []int32 {
	out := make([]int32, len(info.PodSets))
	for i, ps := range info.PodSets {
		out[i] = ps.Count
	}
	return out
}
