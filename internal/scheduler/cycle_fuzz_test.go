package scheduler

import (
	"testing"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/quota"
	"github.com/sluicehq/sluice/internal/workload"
)

// FuzzScheduleCycle runs one cycle over a snapshot built from fuzzed
// quotas (in milli-cpu, up to the int64 bounds) and fuzzed workloads (cpu
// quantities as users write them, pod counts), some already admitted. It
// must not panic, nor decide a workload twice; afterwards no node's usage is negative and no admission
// took a queue beyond the most it can get (its Potential) or a cohort
// beyond its quota.
func FuzzScheduleCycle(f *testing.F) {
	f.Add(int64(8000), int64(4000), int64(-1), "1", "4Ei", "500m", uint8(3), uint8(2), uint8(1), true)
	f.Add(int64(9223372036854775807), int64(9223372036854775807), int64(9223372036854775807), "9223372036854775807", "1e15", "3", uint8(255), uint8(7), uint8(0), false)
	f.Fuzz(func(t *testing.T, nominalA, nominalB, borrowingA int64, cpu1, cpu2, cpu3 string, n1, n2, n3 uint8, strict bool) {
		strategy := kueue.BestEffortFIFO
		if strict {
			strategy = kueue.StrictFIFO
		}
		w := newWorld(flavor("f"))
		a := w.queue("qa", strategy, kueue.TryNextFlavor, true, flavorQuota{name: "f"})
		b := w.queue("qb", strategy, kueue.TryNextFlavor, true, flavorQuota{name: "f"})
		la := quota.Limits{Nominal: max(0, nominalA)}
		if borrowingA >= 0 {
			la.BorrowingLimit = &borrowingA
		}
		a.Node.Quotas[cpuIn("f")] = la
		b.Node.Quotas[cpuIn("f")] = quota.Limits{Nominal: max(0, nominalB)}
		a.WithinClusterQueue = kueue.PreemptionPolicyLowerPriority
		a.ReclaimWithinCohort = kueue.PreemptionPolicyAny
		snap := w.finalize()
		var pending []*workload.Info
		for i, spec := range []struct {
			cpu   string
			count uint8
		}{{cpu1, n1}, {cpu2, n2}, {cpu3, n3}} {
			info, ok := fuzzedWorkload(i, spec.cpu, int32(spec.count))
			if !ok {
				continue
			}
			pending = append(pending, info)
		}
		decisions := Schedule(snap, pending)
		// Behind a StrictFIFO head that waits, workloads get no decision
		// this cycle; none gets two.
		decided := map[string]bool{}
		for _, d := range decisions {
			if decided[d.Info.Key] {
				t.Fatalf("%s decided twice in one cycle", d.Info.Key)
			}
			decided[d.Info.Key] = true
		}
		fr := cpuIn("f")
		for _, cq := range []*ClusterQueue{a, b} {
			if u := cq.Node.Usage(fr); u < 0 || u > cq.Node.Potential(fr) {
				t.Fatalf("%s uses %d, outside [0, potential %d]", cq.Name, u, cq.Node.Potential(fr))
			}
		}
		if u := w.cohort.Usage(fr); u < 0 || u > w.cohort.SubtreeQuota(fr) {
			t.Fatalf("the cohort uses %d of its pool, outside [0, %d]", u, w.cohort.SubtreeQuota(fr))
		}
		if total, bound := quota.AddSat(a.Node.Usage(fr), b.Node.Usage(fr)), quota.AddSat(max(0, nominalA), max(0, nominalB)); total > bound {
			t.Fatalf("the queues use %d together, beyond their quotas %d", total, bound)
		}
	})
}

// fuzzedWorkload is wl with a cpu quantity that may not parse.
func fuzzedWorkload(i int, cpu string, count int32) (info *workload.Info, ok bool) {
	if quota.SlowToParse(cpu) {
		return nil, false
	}
	defer func() {
		if recover() != nil {
			ok = false // resource.MustParse refused it: not a quantity
		}
	}()
	return wl("w"+string(rune('a'+i)), []string{"qa", "qb"}[i%2], int32(i), i, count, cpu), true
}
