package scheduler

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/quota"
	"github.com/sluicehq/sluice/internal/workload"
)

// simulation drives Schedule through arrivals, completions, quota changes
// and preemptions in a cohort tree (root with a pool of 2 CPU, cohorts
// left {qa, qb} and right {qc, qd}; qb may borrow at most 2, qc lends at
// most 1), with or without fair sharing, applying each cycle's decisions at
// once (a victim stops immediately).
type simulation struct {
	fair     bool
	rng      *rand.Rand
	nominal  map[string]int64 // cores per queue
	admitted map[string]*Candidate
	pending  map[string]*workload.Info
	next     int
	log      []string
	// evictedBy records every (preemptor, victim) pair seen.
	evictedBy map[[2]string]bool
}

var simQueues = []string{"qa", "qb", "qc", "qd"}

func newSimulation(seed uint64, fair bool) *simulation {
	return &simulation{fair: fair, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		nominal:  map[string]int64{"qa": 4, "qb": 3, "qc": 2, "qd": 2},
		admitted: map[string]*Candidate{}, pending: map[string]*workload.Info{}, evictedBy: map[[2]string]bool{}}
}

func (s *simulation) snapshot() *Snapshot {
	w := newWorld(flavor("f"))
	w.cohort.Quotas = limitsCPU("f", 2)
	left, right := newCohortNode("left"), newCohortNode("right")
	attach(w.cohort, left)
	attach(w.cohort, right)
	weights := map[string]int64{"qa": 1000, "qb": 2000, "qc": 1000, "qd": 500}
	for i, name := range simQueues {
		q := flavorQuota{name: "f", nominal: s.nominal[name]}
		if name == "qb" {
			q.borrowing = int64p(2)
		}
		cq := w.queue(name, kueue.BestEffortFIFO, kueue.MayStopSearch, false, q)
		if name == "qc" {
			l := cq.Node.Quotas[cpuIn("f")]
			l.LendingLimit = int64p(1000)
			cq.Node.Quotas[cpuIn("f")] = l
		}
		cq.Node.Weight = weights[name]
		attach([]*quota.Node{left, right}[i/2], cq.Node)
		cq.WithinClusterQueue = kueue.PreemptionPolicyLowerPriority
		cq.ReclaimWithinCohort = kueue.PreemptionPolicyLowerPriority
		cq.BorrowWithinCohort = &kueue.BorrowWithinCohort{Policy: kueue.BorrowWithinCohortPolicyLowerPriority}
	}
	var admitted []*Candidate
	for _, key := range slices.Sorted(maps.Keys(s.admitted)) {
		admitted = append(admitted, s.admitted[key])
	}
	chargeAdmitted(w.finalize(), admitted, nil)
	if s.fair {
		w.snap.FairSharing = bothStrategies
	}
	return w.snap
}

// excess is, for every node of the snapshot's tree, how far its usage is
// beyond the most it could ever get: above zero only after a quota was
// lowered under running work.
func excess(snap *Snapshot) map[string]int64 {
	out := map[string]int64{}
	for _, cq := range snap.ClusterQueues {
		for n := cq.Node; n != nil; n = n.Parent {
			out[n.Name] = max(0, n.Usage(cpuIn("f"))-n.Potential(cpuIn("f")))
		}
	}
	return out
}

// step runs one cycle at second t and checks the invariants.
func (s *simulation) step(t *testing.T, now int) {
	t.Helper()
	// Arrivals.
	for range s.rng.IntN(3) {
		s.next++
		q := simQueues[s.rng.IntN(len(simQueues))]
		info := wl(fmt.Sprintf("w%04d", s.next), q, int32(s.rng.IntN(4)), now, int32(1+s.rng.IntN(2)), strconv.Itoa(1+s.rng.IntN(2)))
		s.pending[info.Key] = info
	}
	// Completions.
	for _, key := range slices.Sorted(maps.Keys(s.admitted)) {
		if s.rng.IntN(6) == 0 {
			delete(s.admitted, key)
			s.log = append(s.log, fmt.Sprintf("%d done %s", now, key))
		}
	}
	// Quota changes.
	if s.rng.IntN(10) == 0 {
		q := simQueues[s.rng.IntN(len(simQueues))]
		s.nominal[q] = int64(1 + s.rng.IntN(5))
		s.log = append(s.log, fmt.Sprintf("%d quota %s=%d", now, q, s.nominal[q]))
	}
	var pending []*workload.Info
	for _, key := range slices.Sorted(maps.Keys(s.pending)) {
		pending = append(pending, s.pending[key])
	}
	before := excess(s.snapshot())
	snap := s.snapshot()
	decisions := Schedule(snap, pending)
	victimOf := map[string]string{}
	admittedNow := false
	for _, d := range decisions {
		for _, v := range d.Victims {
			if other, dup := victimOf[v.Key]; dup {
				t.Fatalf("t=%d: %s is a victim of both %s and %s", now, v.Key, other, d.Info.Key)
			}
			if _, ok := s.admitted[v.Key]; !ok {
				t.Fatalf("t=%d: %s evicted by %s but not admitted", now, v.Key, d.Info.Key)
			}
			if d.PreemptionReasons[v.Key] == "" {
				t.Fatalf("t=%d: eviction of %s by %s has no recorded cause", now, v.Key, d.Info.Key)
			}
			victimOf[v.Key] = d.Info.Key
		}
	}
	for _, d := range decisions {
		switch {
		case d.Admitted():
			info := d.Info
			s.admitted[info.Key] = &Candidate{Key: info.Key, ClusterQueue: d.ClusterQueue, Priority: info.Priority,
				QueueTime: info.QueueTime, AdmittedAt: epoch.Add(time.Duration(now) * time.Second), Usage: d.Usage}
			delete(s.pending, info.Key)
			admittedNow = true
			s.log = append(s.log, fmt.Sprintf("%d admit %s in %s", now, info.Key, d.ClusterQueue))
		case len(d.Victims) > 0:
			for _, v := range d.Victims {
				pair := [2]string{d.Info.Key, v.Key}
				if s.evictedBy[[2]string{v.Key, d.Info.Key}] {
					t.Fatalf("t=%d: %s evicts %s, which evicted it before", now, d.Info.Key, v.Key)
				}
				s.evictedBy[pair] = true
				delete(s.admitted, v.Key)
				// Queued again, at the time of its eviction.
				victim := wl(strings.TrimPrefix(v.Key, "ns/"), v.ClusterQueue, v.Priority, now, 1, "1")
				victim.Obj.Spec.PodSets[0].Count = int32(v.Usage[cpuIn("f")] / 1000)
				s.pending[v.Key] = workload.NewInfo(victim.Obj)
				s.log = append(s.log, fmt.Sprintf("%d evict %s for %s (%s)", now, v.Key, d.Info.Key, d.PreemptionReasons[v.Key]))
			}
		}
	}
	// Quota bounds: no admission takes a queue or cohort beyond the most it
	// may use (or further beyond, where a lowered quota left it there).
	if admittedNow {
		for name, over := range excess(s.snapshot()) {
			if over > before[name] {
				t.Fatalf("t=%d: %s is %dm beyond its bound (was %dm)", now, name, over, before[name])
			}
		}
	}
}

func (s *simulation) run(t *testing.T, steps int) []string {
	for now := range steps {
		s.step(t, now)
	}
	return s.log
}

// TestPreemptionProperties: seeded random runs of the pure cycle, each
// replayed to check that equal inputs give equal decisions;
// SLUICE_PROPERTY_STEPS makes them longer.
// SLUICE_PROPERTY_SEEDS runs more seeds (make bench runs both large).
func TestPreemptionProperties(t *testing.T) {
	steps, seeds := 1500, 3
	if v, err := strconv.Atoi(os.Getenv("SLUICE_PROPERTY_STEPS")); err == nil && v > 0 {
		steps = v
	}
	if v, err := strconv.Atoi(os.Getenv("SLUICE_PROPERTY_SEEDS")); err == nil && v > 0 {
		seeds = v
	}
	for seed := range uint64(seeds) {
		for _, fair := range []bool{false, true} {
			t.Run(fmt.Sprintf("seed %d fair sharing %t", seed+1, fair), func(t *testing.T) {
				checkProperties(t, seed+1, fair, steps)
			})
		}
	}
}

func checkProperties(t *testing.T, seed uint64, fair bool, steps int) {
	first := newSimulation(seed, fair).run(t, steps)
	if again := newSimulation(seed, fair).run(t, steps); !reflect.DeepEqual(first, again) {
		t.Fatal("the same seed gave different decisions")
	}
	causes := map[string]int{}
	for _, line := range first {
		if _, after, ok := strings.Cut(line, " evict "); ok {
			causes[after[strings.LastIndex(after, "(")+1:len(after)-1]]++
		}
	}
	if len(causes) == 0 {
		t.Errorf("no preemption happened in %d steps: the run doesn't exercise it", steps)
	}
	if fair && causes[kueue.InCohortFairSharingReason] == 0 {
		t.Errorf("no fair-sharing preemption in %d steps (causes %v)", steps, causes)
	}
	t.Logf("%d steps, evictions by cause: %v", steps, causes)
}
