package apply

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/apis/scheme"
	"github.com/sluicehq/sluice/internal/workload"
)

// These tests inject failures into the client the apply layer writes
// through (a fake client: the logic under test is what sluice does with
// each answer, not the API server) and check that no quota is given twice,
// nothing is stranded, and failures are retried with backoff.

// faults decides, per call, whether a Workload status patch or read fails.
type faults struct {
	mu sync.Mutex
	// patch returns the error a status patch of the named workload gets,
	// and whether the patch lands anyway (its answer lost).
	patch func(name string) (err error, lands bool)
	// get returns the error a read of the named workload gets.
	get           func(name string) error
	patches, gets map[string]int
}

func (f *faults) patchOf(name string) (error, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.patches == nil {
		f.patches = map[string]int{}
	}
	f.patches[name]++
	if f.patch == nil {
		return nil, true
	}
	return f.patch(name)
}

func (f *faults) getOf(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gets == nil {
		f.gets = map[string]int{}
	}
	f.gets[name]++
	if f.get == nil {
		return nil
	}
	return f.get(name)
}

func (f *faults) set(patch func(string) (error, bool), get func(string) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.patch, f.get = patch, get
}

func (f *faults) getCount(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gets[name]
}

func (f *faults) patchCount(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.patches[name]
}

type world struct {
	t        *testing.T
	ctx      context.Context
	clk      *clocktesting.FakeClock
	client   client.Client
	faults   *faults
	tracker  *Tracker
	admitter *Admitter
}

var timeout = apierrors.NewTimeoutError("the answer was lost", 1)

func newWorld(t *testing.T, cq *kueue.ClusterQueue, workloads ...*kueue.Workload) *world {
	t.Helper()
	f := &faults{}
	base := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithStatusSubresource(&kueue.Workload{}).Build()
	c := interceptor.NewClient(base, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*kueue.Workload); ok {
				if err := f.getOf(key.Name); err != nil {
					return err
				}
			}
			return c.Get(ctx, key, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if _, ok := obj.(*kueue.Workload); ok {
				err, lands := f.patchOf(obj.GetName())
				if lands {
					if perr := c.SubResource(sub).Patch(ctx, obj, patch, opts...); perr != nil {
						return perr
					}
				}
				return err
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	clk := clocktesting.NewFakeClock(time.Unix(100_000, 0))
	tracker := NewTracker()
	dispatcher := NewDispatcher(DispatcherOptions{Workers: 4, BackgroundWorkers: 1, BaseBackoff: 100 * time.Millisecond, MaxBackoff: time.Minute, Clock: clk})
	wls := &Workloads{Client: c, APIReader: c, Tracker: tracker, Dispatcher: dispatcher, Clock: clk}
	a := &Admitter{Client: c, Tracker: tracker, Workloads: wls, Dispatcher: dispatcher, Clock: clk,
		Verdicts: &Verdicts{Workloads: wls, Refresh: 5 * time.Second}}
	flavor := &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	tracker.SetFlavor(flavor)
	tracker.SetClusterQueue(cq, metav1.Condition{Status: metav1.ConditionTrue})
	tracker.SetLocalQueue(&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "lq"}, Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(cq.Name)}})
	tracker.SetNamespace("ns", nil)
	for _, wl := range workloads {
		if err := c.Create(ctx, wl); err != nil {
			t.Fatal(err)
		}
		if err := c.Status().Update(ctx, wl); err != nil {
			t.Fatal(err)
		}
		tracker.Observe(wl)
	}
	dispatcher.Start(ctx)
	t.Cleanup(func() { dispatcher.Stop(cancel, time.Minute) })
	return &world{t: t, ctx: ctx, clk: clk, client: c, faults: f, tracker: tracker, admitter: a}
}

func clusterQueue(cpu string, preemption *kueue.ClusterQueuePreemption) *kueue.ClusterQueue {
	return &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq"}, Spec: kueue.ClusterQueueSpec{
		Preemption:        preemption,
		NamespaceSelector: &metav1.LabelSelector{},
		ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
			Flavors: []kueue.FlavorQuotas{{Name: "default", Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse(cpu)}}}}}},
	}}
}

func pendingWorkload(name string, priority int32) *kueue.Workload {
	return &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, CreationTimestamp: metav1.NewTime(time.Unix(1000, 0))},
		Spec: kueue.WorkloadSpec{QueueName: "lq", Priority: ptr.To(priority), PodSets: []kueue.PodSet{{Name: "main", Count: 1,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}}}}}
}

func reservedWorkload(name string, priority int32) *kueue.Workload {
	wl := pendingWorkload(name, priority)
	workload.SetReserved(wl, &kueue.Admission{ClusterQueue: "cq", PodSetAssignments: []kueue.PodSetAssignment{{Name: "main", Count: ptr.To[int32](1),
		Flavors:       map[corev1.ResourceName]kueue.ResourceFlavorReference{corev1.ResourceCPU: "default"},
		ResourceUsage: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}, nil, time.Unix(2000, 0))
	return wl
}

// settle waits until every write that may be made now is made.
func (w *world) settle() {
	w.t.Helper()
	waitFor(w.t, w.admitter.Dispatcher.Idle)
}

// cycleAndSettle runs an admission cycle and waits for its writes.
func (w *world) cycleAndSettle() {
	w.t.Helper()
	w.admitter.cycle(w.ctx)
	w.settle()
}

// step advances the clock and waits for the writes it releases.
func (w *world) step(d time.Duration) {
	w.t.Helper()
	w.clk.Step(d)
	w.settle()
}

func (w *world) get(name string) *kueue.Workload {
	w.t.Helper()
	wl := &kueue.Workload{}
	w.faults.set(nil, nil)
	if err := w.client.Get(w.ctx, client.ObjectKey{Namespace: "ns", Name: name}, wl); err != nil {
		w.t.Fatal(err)
	}
	return wl
}

func failGets(name string) func(string) error {
	return func(n string) error {
		if n == name {
			return apierrors.NewServiceUnavailable("etcd is down")
		}
		return nil
	}
}

func TestLostAdmissionAnswerKeepsTheQuotaCharged(t *testing.T) {
	w := newWorld(t, clusterQueue("1", nil), pendingWorkload("first", 0), pendingWorkload("second", 0))
	// The first admission lands, its answer is lost, and reads fail for a
	// while: the quota must stay with it.
	w.faults.set(func(string) (error, bool) { return timeout, true }, failGets("first"))
	w.admitter.cycle(w.ctx)
	waitFor(t, func() bool {
		return w.tracker.Phase("ns/first") == "uncertain" || w.tracker.Phase("ns/second") == "uncertain"
	})
	admitted, other := "first", "second"
	if w.tracker.Phase("ns/second") == "uncertain" {
		admitted, other = other, admitted
	}
	w.faults.set(nil, failGets(admitted))
	w.step(time.Second) // the read fails, and is retried later
	w.admitter.cycle(w.ctx)
	w.settle()
	if w.tracker.Cache.Holds("ns/" + other) {
		t.Fatalf("%s was admitted while the quota was with %s, whose admission had landed (answer lost)", other, admitted)
	}
	if !w.tracker.Cache.Holds("ns/" + admitted) {
		t.Fatalf("the quota of %s was released while its write's outcome was unknown", admitted)
	}
	w.faults.set(nil, nil)
	w.step(time.Minute) // the read succeeds
	if p := w.tracker.Phase("ns/" + admitted); p != "" {
		t.Fatalf("after a successful read the admission is still %s", p)
	}
	if !w.tracker.Cache.Holds("ns/"+admitted) || w.tracker.Cache.Holds("ns/"+other) {
		t.Fatal("after the read, the reservation that landed is not the one charged")
	}
	if !workload.HasQuotaReservation(w.get(admitted)) {
		t.Fatal("the admission that was charged did not land")
	}
}

func TestRefusedAdmissionAndFailedReadDoNotStrand(t *testing.T) {
	w := newWorld(t, clusterQueue("1", nil), pendingWorkload("only", 0))
	conflict := apierrors.NewConflict(schema.GroupResource{Group: kueue.GroupVersion.Group, Resource: "workloads"}, "only", nil)
	w.faults.set(func(string) (error, bool) { return conflict, false }, failGets("only"))
	w.cycleAndSettle()
	if w.tracker.Cache.Holds("ns/only") {
		t.Fatal("a refused admission kept its quota")
	}
	if len(w.tracker.Queues.All()) != 0 || w.tracker.Phase("ns/only") != "refused" {
		t.Fatalf("expected the workload refused and waiting for a read, phase %q", w.tracker.Phase("ns/only"))
	}
	for range 3 {
		w.step(10 * time.Second) // reads keep failing; each is retried
	}
	w.faults.set(nil, nil)
	w.step(time.Minute)
	if p := w.tracker.Phase("ns/only"); p != "" {
		t.Fatalf("phase %q after a successful read", p)
	}
	if got := len(w.tracker.Queues.Pending()); got != 1 {
		t.Fatalf("%d workloads pending after the read, want the refused one back in its queue", got)
	}
	w.cycleAndSettle()
	if !workload.HasQuotaReservation(w.get("only")) {
		t.Fatal("the workload was not admitted once the API answered again")
	}
}

func TestAlwaysFailingAdmissionBacksOff(t *testing.T) {
	w := newWorld(t, clusterQueue("1", nil), pendingWorkload("only", 0))
	webhookDown := apierrors.NewInternalError(errWebhookDown)
	w.faults.set(func(string) (error, bool) { return webhookDown, false }, nil)
	// Ten seconds of cycles, one every 10ms, as a busy manager would run.
	for range 1000 {
		w.admitter.cycle(w.ctx)
		w.step(10 * time.Millisecond)
	}
	attempts := w.faults.patchCount("only")
	// Backoff from 100ms doubling: 100+200+...+6400 ms is about 12.7s.
	if attempts < 3 || attempts > 8 {
		t.Fatalf("%d admission writes in 10s of a webhook that is down, want a handful (exponential backoff)", attempts)
	}
	if w.tracker.Cache.Holds("ns/only") && w.tracker.Phase("ns/only") != "uncertain" {
		t.Fatal("a workload whose admission never landed holds quota")
	}
}

var errWebhookDown = &webhookError{}

type webhookError struct{}

func (*webhookError) Error() string {
	return `Internal error occurred: failed calling webhook "vworkload.kb.io": connection refused`
}

func TestFailedPreemptionWriteIsRetried(t *testing.T) {
	w := newWorld(t, clusterQueue("1", &kueue.ClusterQueuePreemption{WithinClusterQueue: kueue.PreemptionPolicyLowerPriority}),
		reservedWorkload("low", 0), pendingWorkload("high", 100))
	var failures atomic.Int32
	w.faults.set(func(name string) (error, bool) {
		if name == "low" && failures.Add(1) <= 2 {
			return apierrors.NewServiceUnavailable("try again"), false
		}
		return nil, true
	}, nil)
	w.cycleAndSettle()
	if evicted(w.get("low")) {
		t.Fatal("evicted despite the failing write")
	}
	w.faults.set(func(name string) (error, bool) {
		if name == "low" && failures.Add(1) <= 2 {
			return apierrors.NewServiceUnavailable("try again"), false
		}
		return nil, true
	}, nil)
	w.step(time.Second)
	w.step(time.Second)
	if !evicted(w.get("low")) {
		t.Fatalf("the preemption was not retried until it landed (%d attempts)", w.faults.patchCount("low"))
	}
	if n := w.faults.patchCount("low"); n != 3 {
		t.Fatalf("%d preemption writes, want 3 (two failures, one success)", n)
	}
}

func evicted(wl *kueue.Workload) bool {
	return meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted) && !workload.HasQuotaReservation(wl)
}

func TestPreemptionOfAVictimSeenFinishedIsNotWritten(t *testing.T) {
	w := newWorld(t, clusterQueue("1", &kueue.ClusterQueuePreemption{WithinClusterQueue: kueue.PreemptionPolicyLowerPriority}),
		reservedWorkload("low", 0), pendingWorkload("high", 100))
	w.faults.set(func(name string) (error, bool) {
		if name == "low" {
			return apierrors.NewServiceUnavailable("try again"), false
		}
		return nil, true
	}, nil)
	w.cycleAndSettle()
	if n := w.faults.patchCount("low"); n != 1 {
		t.Fatalf("%d preemption writes, want 1 (failed)", n)
	}
	// Before the retry, the watch shows the victim finished: its quota is
	// back and the preemption is moot.
	low := w.get("low")
	meta.SetStatusCondition(&low.Status.Conditions, metav1.Condition{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: "Succeeded"})
	if err := w.client.Status().Update(w.ctx, low); err != nil {
		t.Fatal(err)
	}
	w.tracker.Observe(low)
	reads := w.faults.getCount("low")
	w.step(time.Second)
	if n := w.faults.patchCount("low"); n != 1 {
		t.Fatalf("%d preemption writes, want none after the victim was seen finished", n-1)
	}
	if n := w.faults.getCount("low") - reads; n != 0 {
		t.Fatalf("%d reads of a victim seen finished, want none", n)
	}
	if meta.IsStatusConditionTrue(w.get("low").Status.Conditions, kueue.WorkloadEvicted) {
		t.Fatal("a finished victim was marked evicted")
	}
}

// The admission patch carries exactly what SetReserved sets and the version
// the decision was made on: the API server refuses it on any newer version.
func TestAdmissionPatchIsConditionalOnTheDecidedVersion(t *testing.T) {
	wl := &kueue.Workload{}
	wl.ResourceVersion = "42"
	workload.SetReserved(wl, &kueue.Admission{ClusterQueue: "cq"}, nil, time.Unix(100, 0))
	raw, err := admissionPatch(wl).Data(wl)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if got["metadata"]["resourceVersion"] != "42" || len(got["metadata"]) != 1 {
		t.Fatalf("metadata %v, want the resourceVersion alone", got["metadata"])
	}
	if len(got["status"]) != 3 || got["status"]["admission"] == nil || len(got["status"]["conditions"].([]any)) != 2 || got["status"]["admissionChecks"] != nil {
		t.Fatalf("status %v, want the admission, its two conditions and no checks", got["status"])
	}
	if len(got) != 2 {
		t.Fatalf("patch %s touches more than metadata and status", raw)
	}
}
