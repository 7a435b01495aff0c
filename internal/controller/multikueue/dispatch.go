package multikueue

import (
	"maps"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// incrementalRound is how long the incremental dispatcher waits for the
// workers it nominated before it nominates more.
const incrementalRound = 5 * time.Minute

// Dispatcher picks the workers a workload is offered to.
type Dispatcher struct {
	// Name is the configuration's multiKueue.dispatcherName.
	Name string
	// StepSize is how many workers the incremental dispatcher adds a round.
	StepSize int
}

// nominate returns the workers, among the usable ones, that a workload
// waiting since `since` is offered to at now, and when that set grows
// next (zero: never). AllAtOnce offers it to all of them; Incremental to
// StepSize more (by name) each round. The round comes from since, not
// from memory, so a restart doesn't start the rounds over.
func (d Dispatcher) nominate(usable []string, since, now time.Time) ([]string, time.Time) {
	sorted := slices.Sorted(slices.Values(usable))
	if d.Name != configapi.MultiKueueDispatcherModeIncremental || d.StepSize <= 0 {
		return sorted, time.Time{}
	}
	rounds := 1 + int(now.Sub(since)/incrementalRound)
	n := min(len(sorted), rounds*d.StepSize)
	next := time.Time{}
	if n < len(sorted) {
		next = since.Add(time.Duration(rounds) * incrementalRound)
	}
	return sorted[:n], next
}

// winner is the worker whose copy of the workload reserved quota first
// (by the QuotaReserved transition, then by name), or "".
func winner(copies map[string]*kueue.Workload) string {
	best, bestAt := "", time.Time{}
	for _, cluster := range slices.Sorted(maps.Keys(copies)) {
		c := meta.FindStatusCondition(copies[cluster].Status.Conditions, kueue.WorkloadQuotaReserved)
		if c == nil || c.Status != metav1.ConditionTrue {
			continue
		}
		if best == "" || c.LastTransitionTime.Time.Before(bestAt) {
			best, bestAt = cluster, c.LastTransitionTime.Time
		}
	}
	return best
}

// lost tells whether a worker has been inactive longer than timeout.
func lost(mkc *kueue.MultiKueueCluster, timeout time.Duration, now time.Time) (bool, time.Time) {
	c := meta.FindStatusCondition(mkc.Status.Conditions, kueue.MultiKueueClusterActive)
	if c == nil || c.Status == metav1.ConditionTrue {
		return false, time.Time{}
	}
	at := c.LastTransitionTime.Add(timeout)
	return !now.Before(at), at
}
