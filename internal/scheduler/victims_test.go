package scheduler

import (
	"reflect"
	"testing"
	"time"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/quota"
)

func cand(key, cq string, priority int32, admittedSec int, cpu int64) *Candidate {
	return &Candidate{Key: key, ClusterQueue: cq, Priority: priority,
		QueueTime: epoch.Add(time.Duration(admittedSec) * time.Second), AdmittedAt: epoch.Add(time.Duration(admittedSec) * time.Second),
		Usage: quota.Amounts{cpuIn("f"): cpu * 1000}}
}

func keys(cs []*Candidate) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Key)
	}
	return out
}

func TestPreemptibleInQueue(t *testing.T) {
	c := cand("c", "q", 5, 10, 1)
	cases := []struct {
		policy   kueue.PreemptionPolicy
		priority int32
		queued   int
		want     bool
	}{
		{kueue.PreemptionPolicyNever, 100, 0, false},
		{kueue.PreemptionPolicyLowerPriority, 6, 0, true},
		{kueue.PreemptionPolicyLowerPriority, 5, 0, false},
		{kueue.PreemptionPolicyLowerOrNewerEqualPriority, 5, 0, true},   // c queued later
		{kueue.PreemptionPolicyLowerOrNewerEqualPriority, 5, 20, false}, // c queued earlier
		{kueue.PreemptionPolicyLowerOrNewerEqualPriority, 4, 0, false},
	}
	for _, tc := range cases {
		if got := preemptibleInQueue(tc.policy, tc.priority, epoch.Add(time.Duration(tc.queued)*time.Second), c); got != tc.want {
			t.Errorf("%s, preemptor priority %d queued at %ds: %v, want %v", tc.policy, tc.priority, tc.queued, got, tc.want)
		}
	}
}

func TestOrderCandidates(t *testing.T) {
	cs := []*Candidate{cand("own-low", "own", 1, 0, 1), cand("other-high", "other", 9, 0, 1), cand("other-low-old", "other", 1, 0, 1),
		cand("other-low-new", "other", 1, 50, 1), cand("other-low-new-b", "other", 1, 50, 1)}
	orderCandidates(cs, "own")
	want := []string{"other-low-new", "other-low-new-b", "other-low-old", "other-high", "own-low"}
	if got := keys(cs); !reflect.DeepEqual(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

func TestSelectVictims(t *testing.T) {
	// The preemptor needs `need` CPU freed.
	fitsWhen := func(need int64) func([]*Candidate) bool {
		return func(chosen []*Candidate) bool {
			freed := int64(0)
			for _, c := range chosen {
				freed += c.Usage[cpuIn("f")]
			}
			return freed >= need*1000
		}
	}
	cases := []struct {
		name  string
		cands []*Candidate
		need  int64
		want  []string
	}{
		{"one is enough", []*Candidate{cand("a", "q", 1, 0, 2), cand("b", "q", 1, 0, 2)}, 2, []string{"a"}},
		{"two needed", []*Candidate{cand("a", "q", 1, 0, 1), cand("b", "q", 1, 0, 1), cand("c", "q", 1, 0, 1)}, 2, []string{"a", "b"}},
		{"a small one taken first is put back", []*Candidate{cand("small", "q", 1, 0, 1), cand("big", "q", 1, 0, 4)}, 4, []string{"big"}},
		{"not enough in all", []*Candidate{cand("a", "q", 1, 0, 1)}, 2, nil},
		{"no candidates", nil, 1, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := keys(selectVictims(tc.cands, fitsWhen(tc.need))); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("victims %v, want %v", got, tc.want)
			}
		})
	}
}
