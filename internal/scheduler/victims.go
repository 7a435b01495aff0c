package scheduler

import (
	"slices"
	"sort"
	"time"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/quota"
)

// Candidate is an admitted workload a pending one might preempt.
type Candidate struct {
	Key          string
	ClusterQueue string
	Priority     int32
	// QueueTime orders equal priorities: LowerOrNewerEqualPriority may evict
	// one that queued later than the preemptor.
	QueueTime  time.Time
	AdmittedAt time.Time
	Usage      quota.Amounts
}

// preemptibleInQueue tells whether withinClusterQueue's policy lets a
// preemptor of priority and queue time evict c, in the same ClusterQueue.
func preemptibleInQueue(policy kueue.PreemptionPolicy, priority int32, queued time.Time, c *Candidate) bool {
	switch policy {
	case kueue.PreemptionPolicyLowerPriority:
		return c.Priority < priority
	case kueue.PreemptionPolicyLowerOrNewerEqualPriority:
		return c.Priority < priority || (c.Priority == priority && queued.Before(c.QueueTime))
	}
	return false
}

// orderCandidates sorts candidates in the order victims are tried: other
// queues' before the preemptor's own, lower priority first, the most
// recently admitted first, then by key so that equal inputs give equal
// decisions.
func orderCandidates(cands []*Candidate, ownQueue string) {
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if aOwn, bOwn := a.ClusterQueue == ownQueue, b.ClusterQueue == ownQueue; aOwn != bOwn {
			return !aOwn
		}
		if a.Priority != b.Priority {
			return a.Priority < b.Priority
		}
		if !a.AdmittedAt.Equal(b.AdmittedAt) {
			return a.AdmittedAt.After(b.AdmittedAt)
		}
		return a.Key < b.Key
	})
}

// selectVictims finds the smallest set, in the given order, whose removal
// makes fits true: it removes candidates until the preemptor fits, then
// puts back, latest removed first, every one that isn't needed. nil means
// no set of candidates is enough.
func selectVictims(ordered []*Candidate, fits func(chosen []*Candidate) bool) []*Candidate {
	var chosen []*Candidate
	for _, c := range ordered {
		chosen = append(chosen, c)
		if fits(chosen) {
			break
		}
	}
	if len(chosen) == 0 || !fits(chosen) {
		return nil
	}
	return putBackUnneeded(chosen, fits)
}

// putBackUnneeded drops from chosen, latest first, every victim without
// which fits still holds.
func putBackUnneeded(chosen []*Candidate, fits func(chosen []*Candidate) bool) []*Candidate {
	for i := range slices.Backward(chosen) {
		if without := slices.Concat(chosen[:i], chosen[i+1:]); fits(without) {
			chosen = without
		}
	}
	return chosen
}
