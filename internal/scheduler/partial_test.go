package scheduler

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/quota"
	"github.com/sluicehq/sluice/internal/workload"
)

// partialWl is wl with a minCount (job-min-parallelism).
func partialWl(name, lq string, t int, count, minCount int32, cpu string) *workload.Info {
	info := wl(name, lq, 0, t, count, cpu)
	info.Obj.Spec.PodSets[0].MinCount = &minCount
	return workload.NewInfo(info.Obj)
}

func TestPartialAdmission(t *testing.T) {
	cases := []struct {
		name      string
		nominal   int64
		used      int64 // cores already in use
		info      *workload.Info
		wantCount int32 // 0: not admitted
	}{
		{"fits in full", 8, 0, partialWl("a", "q", 0, 5, 2, "1"), 5},
		{"the largest count that fits", 8, 5, partialWl("a", "q", 0, 5, 2, "1"), 3},
		{"exactly minCount", 8, 6, partialWl("a", "q", 0, 5, 2, "1"), 2},
		{"below minCount waits", 8, 7, partialWl("a", "q", 0, 5, 2, "1"), 0},
		{"more than the queue could ever hold, cut to fit", 4, 0, partialWl("a", "q", 0, 10, 1, "1"), 4},
		{"without minCount, all or nothing", 8, 5, wl("a", "q", 0, 0, 5, "1"), 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(flavor("on-demand"))
			q := w.queue("q", kueue.BestEffortFIFO, kueue.MayStopSearch, false, flavorQuota{name: "on-demand", nominal: tc.nominal})
			snap := w.finalize()
			q.Node.Charge(cpuIn("on-demand"), tc.used*1000)
			ds := Schedule(snap, []*workload.Info{tc.info})
			if len(ds) != 1 {
				t.Fatalf("%d decisions", len(ds))
			}
			d := ds[0]
			if tc.wantCount == 0 {
				if d.Admitted() {
					t.Fatalf("admitted with %d pods, want it to wait", *d.Admission.PodSetAssignments[0].Count)
				}
				return
			}
			if !d.Admitted() {
				t.Fatalf("not admitted: %s %s", d.Reason, d.Message)
			}
			psa := d.Admission.PodSetAssignments[0]
			if *psa.Count != tc.wantCount {
				t.Errorf("admitted count %d, want %d", *psa.Count, tc.wantCount)
			}
			if got := psa.ResourceUsage.Cpu().MilliValue(); got != int64(tc.wantCount)*1000 {
				t.Errorf("resourceUsage cpu %dm, want %dm (the admitted pods only)", got, tc.wantCount*1000)
			}
		})
	}
}

func TestPartialAdmissionShrinksPodSetsTogether(t *testing.T) {
	w := newWorld(flavor("on-demand"))
	w.queue("q", kueue.BestEffortFIFO, kueue.MayStopSearch, false, flavorQuota{name: "on-demand", nominal: 6})
	info := wl("a", "q", 0, 0, 4, "1")
	second := info.Obj.Spec.PodSets[0]
	second.Name = "workers"
	second.Count = 8
	info.Obj.Spec.PodSets = append(info.Obj.Spec.PodSets, second)
	minMain, minWorkers := int32(2), int32(0)
	info.Obj.Spec.PodSets[0].MinCount, info.Obj.Spec.PodSets[1].MinCount = &minMain, &minWorkers
	ds := Schedule(w.finalize(), []*workload.Info{workload.NewInfo(info.Obj)})
	if !ds[0].Admitted() {
		t.Fatalf("not admitted: %s", ds[0].Message)
	}
	// 12 pods of 1 CPU in 6: step 4 of 8 leaves main 4-1=3 and workers 8-4=4
	// (7, too many); step 5 leaves 3 and 3 (6).
	got := []int32{*ds[0].Admission.PodSetAssignments[0].Count, *ds[0].Admission.PodSetAssignments[1].Count}
	if got[0] != 3 || got[1] != 3 {
		t.Errorf("counts %v, want [3 3]", got)
	}
}

func cpuIn(flavor string) quota.FlavorResource {
	return quota.FlavorResource{Flavor: flavor, Resource: corev1.ResourceCPU}
}
