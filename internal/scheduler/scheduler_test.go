package scheduler

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/quota"
	"github.com/sluicehq/sluice/internal/workload"
)

// world builds snapshots for tests: queues with cpu quota per flavor, all
// in one cohort unless told otherwise.
type world struct {
	snap   *Snapshot
	cohort *quota.Node
}

func newWorld(flavors ...*kueue.ResourceFlavor) *world {
	w := &world{snap: &Snapshot{
		ClusterQueues:   map[string]*ClusterQueue{},
		LocalQueues:     map[string]*LocalQueue{},
		Flavors:         map[string]*kueue.ResourceFlavor{},
		NamespaceLabels: map[string]labels.Set{"ns": {"team": "a"}},
	}, cohort: quota.NewNode("cohort", false, nil)}
	for _, f := range flavors {
		w.snap.Flavors[f.Name] = f
	}
	return w
}

func flavor(name string, taints ...corev1.Taint) *kueue.ResourceFlavor {
	f := &kueue.ResourceFlavor{}
	f.Name = name
	f.Spec.NodeLabels = map[string]string{"pool": name}
	f.Spec.NodeTaints = taints
	return f
}

type flavorQuota struct {
	name      string
	nominal   int64 // cores
	borrowing *int64
}

// queue adds a ClusterQueue with one resource group over cpu, and a
// LocalQueue ns/<name>.
func (w *world) queue(name string, strategy kueue.QueueingStrategy, policy kueue.FlavorFungibilityPolicy, inCohort bool, flavors ...flavorQuota) *ClusterQueue {
	limits := map[quota.FlavorResource]quota.Limits{}
	group := ResourceGroup{Resources: []corev1.ResourceName{corev1.ResourceCPU}}
	for _, f := range flavors {
		l := quota.Limits{Nominal: f.nominal * 1000}
		if f.borrowing != nil {
			l.BorrowingLimit = int64p(*f.borrowing * 1000)
		}
		limits[quota.FlavorResource{Flavor: f.name, Resource: corev1.ResourceCPU}] = l
		group.Flavors = append(group.Flavors, f.name)
	}
	node := quota.NewNode(name, true, limits)
	if inCohort {
		quota.Attach(w.cohort, node)
	}
	cq := &ClusterQueue{Name: name, Node: node, Strategy: strategy, WhenCanBorrow: policy,
		Groups: []ResourceGroup{group}, NamespaceSelector: labels.Everything(), Active: true}
	w.snap.ClusterQueues[name] = cq
	w.snap.LocalQueues["ns/"+name] = &LocalQueue{ClusterQueue: name}
	return cq
}

func (w *world) finalize() *Snapshot {
	quota.Finalize(w.cohort)
	for _, cq := range w.snap.ClusterQueues {
		if cq.Node.Parent == nil {
			quota.Finalize(cq.Node)
		}
	}
	return w.snap
}

func int64p(v int64) *int64 { return &v }

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// wl makes a workload of count pods of cpu cores each, queued at second t.
func wl(name, lq string, priority int32, t int, count int32, cpu string) *workload.Info {
	obj := &kueue.Workload{}
	obj.Namespace, obj.Name = "ns", name
	obj.CreationTimestamp.Time = epoch.Add(time.Duration(t) * time.Second)
	obj.Spec.QueueName = kueue.LocalQueueName(lq)
	obj.Spec.Priority = &priority
	obj.Spec.PodSets = []kueue.PodSet{{Name: "main", Count: count, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}},
	}}}}
	return workload.NewInfo(obj)
}

// summary renders decisions as "name:flavor" for admissions and
// "name:Reason" for the others, in decision order.
func summary(ds []Decision) []string {
	var out []string
	for _, d := range ds {
		if d.Admitted() {
			out = append(out, fmt.Sprintf("%s:%s", d.Info.Name, d.Admission.PodSetAssignments[0].Flavors[corev1.ResourceCPU]))
		} else {
			out = append(out, fmt.Sprintf("%s:%s", d.Info.Name, d.Reason))
		}
	}
	return out
}

func TestSchedule(t *testing.T) {
	cases := []struct {
		name  string
		setup func(w *world) []*workload.Info
		want  []string
	}{
		{name: "fits in the first flavor", setup: func(w *world) []*workload.Info {
			w.queue("q", kueue.BestEffortFIFO, kueue.MayStopSearch, false, flavorQuota{name: "on-demand", nominal: 4})
			return []*workload.Info{wl("a", "q", 0, 0, 2, "1")}
		}, want: []string{"a:on-demand"}},
		{name: "second flavor when the first is full", setup: func(w *world) []*workload.Info {
			w.queue("q", kueue.BestEffortFIFO, kueue.MayStopSearch, false, flavorQuota{name: "on-demand", nominal: 2}, flavorQuota{name: "spot", nominal: 4})
			return []*workload.Info{wl("a", "q", 0, 0, 2, "1"), wl("b", "q", 0, 1, 2, "1"), wl("c", "q", 0, 2, 2, "1"), wl("d", "q", 0, 3, 2, "1")}
		}, want: []string{"a:on-demand", "b:spot", "c:spot", "d:WaitingForQuota"}},
		{name: "priority first, then queue time", setup: func(w *world) []*workload.Info {
			w.queue("q", kueue.BestEffortFIFO, kueue.MayStopSearch, false, flavorQuota{name: "on-demand", nominal: 2})
			return []*workload.Info{wl("old", "q", 0, 0, 2, "1"), wl("urgent", "q", 10, 5, 2, "1"), wl("older", "q", 0, -1, 2, "1")}
		}, want: []string{"urgent:on-demand", "older:WaitingForQuota", "old:WaitingForQuota"}},
		{name: "StrictFIFO head that waits for quota blocks smaller ones", setup: func(w *world) []*workload.Info {
			w.queue("q", kueue.StrictFIFO, kueue.MayStopSearch, false, flavorQuota{name: "on-demand", nominal: 3})
			return []*workload.Info{wl("running", "q", 0, -1, 2, "1"), wl("big", "q", 0, 0, 2, "1"), wl("small", "q", 0, 1, 1, "1")}
		}, want: []string{"running:on-demand", "big:WaitingForQuota"}},
		{name: "StrictFIFO head that can never fit doesn't block the queue", setup: func(w *world) []*workload.Info {
			w.queue("q", kueue.StrictFIFO, kueue.MayStopSearch, false, flavorQuota{name: "on-demand", nominal: 3})
			return []*workload.Info{wl("big", "q", 0, 0, 4, "1"), wl("small", "q", 0, 1, 1, "1")}
		}, want: []string{"big:ExceedsMaxQuota", "small:on-demand"}},
		{name: "a request beyond int64 never fits and doesn't wrap", setup: func(w *world) []*workload.Info {
			w.queue("q", kueue.BestEffortFIFO, kueue.MayStopSearch, false, flavorQuota{name: "on-demand", nominal: 8})
			// 3 x 4e18 cores wraps int64 in plain arithmetic.
			return []*workload.Info{wl("huge", "q", 0, 0, 3, "4e15"), wl("small", "q", 0, 1, 8, "1"), wl("more", "q", 0, 2, 1, "1")}
		}, want: []string{"huge:ExceedsMaxQuota", "small:on-demand", "more:WaitingForQuota"}},
		{name: "BestEffortFIFO lets smaller ones pass", setup: func(w *world) []*workload.Info {
			w.queue("q", kueue.BestEffortFIFO, kueue.MayStopSearch, false, flavorQuota{name: "on-demand", nominal: 3})
			return []*workload.Info{wl("big", "q", 0, 0, 3, "2"), wl("small", "q", 0, 1, 1, "1")}
		}, want: []string{"big:ExceedsMaxQuota", "small:on-demand"}},
		{name: "MayStopSearch borrows in the first flavor", setup: func(w *world) []*workload.Info {
			w.queue("q", kueue.BestEffortFIFO, kueue.MayStopSearch, true, flavorQuota{name: "on-demand", nominal: 1}, flavorQuota{name: "spot", nominal: 4})
			w.queue("lender", kueue.BestEffortFIFO, kueue.MayStopSearch, true, flavorQuota{name: "on-demand", nominal: 4})
			return []*workload.Info{wl("a", "q", 0, 0, 2, "1")}
		}, want: []string{"a:on-demand"}},
		{name: "TryNextFlavor avoids borrowing", setup: func(w *world) []*workload.Info {
			w.queue("q", kueue.BestEffortFIFO, kueue.TryNextFlavor, true, flavorQuota{name: "on-demand", nominal: 1}, flavorQuota{name: "spot", nominal: 4})
			w.queue("lender", kueue.BestEffortFIFO, kueue.MayStopSearch, true, flavorQuota{name: "on-demand", nominal: 4})
			return []*workload.Info{wl("a", "q", 0, 0, 2, "1")}
		}, want: []string{"a:spot"}},
		{name: "TryNextFlavor still borrows when nothing else fits", setup: func(w *world) []*workload.Info {
			w.queue("q", kueue.BestEffortFIFO, kueue.TryNextFlavor, true, flavorQuota{name: "on-demand", nominal: 1}, flavorQuota{name: "spot", nominal: 1})
			w.queue("lender", kueue.BestEffortFIFO, kueue.MayStopSearch, true, flavorQuota{name: "on-demand", nominal: 4})
			return []*workload.Info{wl("a", "q", 0, 0, 2, "1")}
		}, want: []string{"a:on-demand"}},
		{name: "within-quota admissions go before borrowing ones", setup: func(w *world) []*workload.Info {
			w.queue("borrower", kueue.BestEffortFIFO, kueue.MayStopSearch, true, flavorQuota{name: "on-demand", nominal: 0})
			w.queue("owner", kueue.BestEffortFIFO, kueue.MayStopSearch, true, flavorQuota{name: "on-demand", nominal: 4})
			// The borrower's workload is older and has higher priority, yet the
			// owner's low-priority one uses the owner's quota first.
			return []*workload.Info{wl("borrow", "borrower", 100, 0, 4, "1"), wl("own", "owner", 0, 9, 4, "1")}
		}, want: []string{"own:on-demand", "borrow:WaitingForQuota"}},
		{name: "borrowing limit", setup: func(w *world) []*workload.Info {
			w.queue("q", kueue.BestEffortFIFO, kueue.MayStopSearch, true, flavorQuota{name: "on-demand", nominal: 2, borrowing: int64p(1)})
			w.queue("lender", kueue.BestEffortFIFO, kueue.MayStopSearch, true, flavorQuota{name: "on-demand", nominal: 10})
			return []*workload.Info{wl("a", "q", 0, 0, 3, "1"), wl("b", "q", 0, 1, 1, "1")}
		}, want: []string{"a:on-demand", "b:WaitingForQuota"}},
		{name: "routing reasons", setup: func(w *world) []*workload.Info {
			cq := w.queue("q", kueue.BestEffortFIFO, kueue.MayStopSearch, false, flavorQuota{name: "on-demand", nominal: 2})
			cq.NamespaceSelector = labels.SelectorFromSet(labels.Set{"team": "b"})
			w.queue("off", kueue.BestEffortFIFO, kueue.MayStopSearch, false, flavorQuota{name: "on-demand", nominal: 2}).Active = false
			return []*workload.Info{wl("nolq", "missing", 0, 0, 1, "1"), wl("ns", "q", 0, 1, 1, "1"), wl("inactive", "off", 0, 2, 1, "1")}
		}, want: []string{"nolq:Pending", "ns:Pending", "inactive:Pending"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(flavor("on-demand"), flavor("spot"))
			pending := tc.setup(w)
			got := summary(Schedule(w.finalize(), pending))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWaitingMessageHasNumbers(t *testing.T) {
	w := newWorld(flavor("on-demand"))
	q := w.queue("q", kueue.BestEffortFIFO, kueue.MayStopSearch, true, flavorQuota{name: "on-demand", nominal: 10})
	w.queue("other", kueue.BestEffortFIFO, kueue.MayStopSearch, true, flavorQuota{name: "on-demand", nominal: 0})
	snap := w.finalize()
	q.Node.Charge(quota.FlavorResource{Flavor: "on-demand", Resource: corev1.ResourceCPU}, 8000)
	ds := Schedule(snap, []*workload.Info{wl("a", "q", 0, 0, 4, "1")})
	want := "couldn't assign flavors to podSet main: insufficient quota for cpu in flavor on-demand: requests 4, available 2 of nominal 10, 8 in use, cohort can lend 0"
	if len(ds) != 1 || ds[0].Reason != kueue.ReasonWaitingForQuota || ds[0].Message != want {
		t.Fatalf("got %+v\nwant message %q", ds, want)
	}
	if !ds[0].Park {
		t.Error("a BestEffortFIFO workload that doesn't fit must be parked")
	}
}

func TestFlavorEligibility(t *testing.T) {
	spotTaint := corev1.Taint{Key: "spot", Value: "true", Effect: corev1.TaintEffectNoSchedule}
	cases := []struct {
		name   string
		modify func(ps *kueue.PodSet)
		want   string
	}{
		{"untolerated taint skips spot", func(ps *kueue.PodSet) {}, "a:on-demand"},
		{"toleration allows spot", func(ps *kueue.PodSet) {
			ps.Template.Spec.Tolerations = []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}}
		}, "a:spot"},
		{"nodeSelector steers to on-demand", func(ps *kueue.PodSet) {
			ps.Template.Spec.Tolerations = []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}}
			ps.Template.Spec.NodeSelector = map[string]string{"pool": "on-demand", "zone": "x"}
		}, "a:on-demand"},
		{"required affinity on the flavor's keys", func(ps *kueue.PodSet) {
			ps.Template.Spec.Tolerations = []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}}
			ps.Template.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
					{Key: "pool", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"spot"}},
					{Key: "unrelated", Operator: corev1.NodeSelectorOpExists},
				}}}}}}
		}, "a:on-demand"},
		{"no flavor matches", func(ps *kueue.PodSet) {
			ps.Template.Spec.NodeSelector = map[string]string{"pool": "gpu"}
		}, "a:NoMatchingFlavor"},
		{"resource not covered", func(ps *kueue.PodSet) {
			ps.Template.Spec.Containers[0].Resources.Requests["nvidia.com/gpu"] = resource.MustParse("1")
		}, "a:NoMatchingFlavor"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(flavor("spot", spotTaint), flavor("on-demand"))
			w.queue("q", kueue.BestEffortFIFO, kueue.MayStopSearch, false, flavorQuota{name: "spot", nominal: 4}, flavorQuota{name: "on-demand", nominal: 4})
			info := wl("a", "q", 0, 0, 1, "1")
			tc.modify(&info.Obj.Spec.PodSets[0])
			info = workload.NewInfo(info.Obj)
			ds := Schedule(w.finalize(), []*workload.Info{info})
			if got := summary(ds); len(got) != 1 || got[0] != tc.want {
				t.Errorf("got %v (%s), want %s", got, ds[0].Message, tc.want)
			}
		})
	}
}

func TestPodsResourceIsCounted(t *testing.T) {
	w := newWorld(flavor("on-demand"))
	cq := w.queue("q", kueue.BestEffortFIFO, kueue.MayStopSearch, false)
	cq.Groups = []ResourceGroup{{Resources: []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourcePods}, Flavors: []string{"on-demand"}}}
	cq.Node = quota.NewNode("q", true, map[quota.FlavorResource]quota.Limits{
		{Flavor: "on-demand", Resource: corev1.ResourceCPU}:  {Nominal: 100000},
		{Flavor: "on-demand", Resource: corev1.ResourcePods}: {Nominal: 5},
	})
	ds := Schedule(w.finalize(), []*workload.Info{wl("a", "q", 0, 0, 3, "100m"), wl("b", "q", 0, 1, 3, "100m")})
	if got := summary(ds); !reflect.DeepEqual(got, []string{"a:on-demand", "b:WaitingForQuota"}) {
		t.Fatalf("got %v", got)
	}
	if !strings.Contains(ds[1].Message, "insufficient quota for pods") {
		t.Errorf("message %q", ds[1].Message)
	}
	if q := ds[0].Admission.PodSetAssignments[0].ResourceUsage[corev1.ResourcePods]; q.Value() != 3 {
		t.Errorf("pods usage %v", q)
	}
}

func TestDeterministic(t *testing.T) {
	run := func() []string {
		w := newWorld(flavor("on-demand"), flavor("spot"))
		for i := range 5 {
			w.queue(fmt.Sprintf("q%d", i), kueue.BestEffortFIFO, kueue.MayStopSearch, true,
				flavorQuota{name: "on-demand", nominal: int64(i)}, flavorQuota{name: "spot", nominal: 2})
		}
		var pending []*workload.Info
		for i := range 60 {
			pending = append(pending, wl(fmt.Sprintf("w%02d", i), fmt.Sprintf("q%d", i%5), int32(i%3), i%7, int32(1+i%2), "1"))
		}
		return summary(Schedule(w.finalize(), pending))
	}
	first := run()
	for range 5 {
		if again := run(); !reflect.DeepEqual(first, again) {
			t.Fatalf("decisions differ between runs:\n%v\n%v", first, again)
		}
	}
}
