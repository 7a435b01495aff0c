package scheduler

import (
	"fmt"
	"testing"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/workload"
)

// BenchmarkScheduleCycle measures one cycle from a snapshot: 50,000 pending
// workloads over 1,000 ClusterQueues in 10 cohorts (10 CPU each, 1-3 CPU
// workloads at three priorities), the shape of the large scenario. Only a
// small part fits, so the cycle exercises admission, borrowing, parking and
// the same-shape memo. Run with: go test -bench ScheduleCycle ./internal/scheduler
func BenchmarkScheduleCycle(b *testing.B) {
	const queues, cohorts, perQueue = 1000, 10, 50
	var pending []*workload.Info
	for q := range queues {
		for i := range perQueue {
			pending = append(pending, wl(fmt.Sprintf("w-%d-%d", q, i), fmt.Sprintf("q%d", q), int32(i%3), i, 1, fmt.Sprint(1+i%3)))
		}
	}
	build := func() *Snapshot {
		worlds := make([]*world, cohorts)
		w := newWorld(flavor("on-demand"), flavor("spot"))
		for c := range cohorts {
			worlds[c] = &world{snap: w.snap, cohort: newWorld().cohort}
		}
		for q := range queues {
			worlds[q%cohorts].queue(fmt.Sprintf("q%d", q), kueue.BestEffortFIFO, kueue.MayStopSearch, true,
				flavorQuota{name: "on-demand", nominal: 10}, flavorQuota{name: "spot", nominal: 5})
		}
		for _, cw := range worlds {
			cw.finalize()
		}
		return w.snap
	}
	b.ReportAllocs()
	decisions, admitted := 0, 0
	for range b.N {
		b.StopTimer()
		snap := build()
		b.StartTimer()
		ds := Schedule(snap, pending)
		decisions += len(ds)
		for i := range ds {
			if ds[i].Admitted() {
				admitted++
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(decisions), "ns/decision")
	b.ReportMetric(float64(admitted)/float64(b.N), "admitted/cycle")
	b.ReportMetric(float64(decisions)/float64(b.N), "decisions/cycle")
}
