package scheduler

import (
	"fmt"
	"strings"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/quota"
	"github.com/sluicehq/sluice/internal/workload"
)

// preempts tells whether a queue lets pending workloads evict admitted ones.
func (cq *ClusterQueue) preempts() bool {
	return cq.WithinClusterQueue != "" && cq.WithinClusterQueue != kueue.PreemptionPolicyNever
}

// preempt looks for room for a workload that doesn't fit by evicting
// admitted workloads of its own queue (withinClusterQueue). It reports a
// decision when the workload should wait for evictions: ones already on
// their way that free enough, or new victims. Victims are never shared
// between two preemptors of one cycle.
func (c *cycle) preempt(cq *ClusterQueue, info *workload.Info) (Decision, bool) {
	fitsAfter := func(freed quota.Amounts) bool {
		cq.Node.ChargeAll(freed, -1)
		_, f := assign(cq, c.snap.Flavors, info, false)
		cq.Node.ChargeAll(freed, 1)
		return f == nil
	}
	wait := Decision{Info: info, ClusterQueue: cq.Name, Reason: kueue.ReasonWaitingForPreemptedWorkloads}
	if len(cq.Evicting) > 0 && fitsAfter(cq.Evicting) {
		wait.Message = fmt.Sprintf("waiting for preempted workloads of ClusterQueue %s to stop and release their quota", cq.Name)
		return wait, true
	}
	var cands []*Candidate
	for _, a := range cq.Admitted {
		if !c.victims[a.Key] && preemptibleInQueue(cq.WithinClusterQueue, info.Priority, info.QueueTime, a) {
			cands = append(cands, a)
		}
	}
	orderCandidates(cands, cq.Name)
	victims := selectVictims(cands, func(freed quota.Amounts) bool {
		withEvicting := quota.Amounts{}
		addAmounts(withEvicting, freed, 1)
		addAmounts(withEvicting, cq.Evicting, 1)
		return fitsAfter(withEvicting)
	})
	if victims == nil {
		return Decision{}, false
	}
	names := make([]string, 0, len(victims))
	for _, v := range victims {
		c.victims[v.Key] = true
		names = append(names, v.Key)
	}
	wait.Victims = victims
	wait.Message = fmt.Sprintf("preempting %d workload(s) of lower priority in ClusterQueue %s to make room: %s", len(victims), cq.Name, strings.Join(names, ", "))
	return wait, true
}
