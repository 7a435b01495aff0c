package apply

import (
	"context"
	"fmt"
	"testing"
	"time"

	"golang.org/x/time/rate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/scheduler"
	"github.com/sluicehq/sluice/internal/workload"
)

func TestVerdictDue(t *testing.T) {
	now := time.Unix(10_000, 0)
	waitingFor := func(message string) metav1.Condition {
		return metav1.Condition{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionFalse, Reason: kueue.ReasonWaitingForQuota, Message: message}
	}
	cases := []struct {
		name       string
		conditions []metav1.Condition
		queued     *queuedVerdict
		budget     *rate.Limiter
		reason     string
		message    string
		want       pendingWriteVerdict
	}{
		{name: "the condition says it already", conditions: []metav1.Condition{waitingFor("available 1")},
			reason: kueue.ReasonWaitingForQuota, message: "available 1", want: noWrite},
		{name: "first verdict", reason: kueue.ReasonWaitingForQuota, message: "available 1", want: writeNow},
		{name: "the same verdict is on its way", queued: &queuedVerdict{reason: kueue.ReasonWaitingForQuota, message: "available 1", at: now},
			reason: kueue.ReasonWaitingForQuota, message: "available 1", want: noWrite},
		{name: "the same verdict landed, then was written over", conditions: []metav1.Condition{{Type: kueue.WorkloadQuotaReserved,
			Status: metav1.ConditionFalse, Reason: kueue.ReasonPending, Message: "Evicted: ClusterQueue cq is stopped with HoldAndDrain"}},
			queued: &queuedVerdict{reason: kueue.ReasonPending, message: "ClusterQueue cq is inactive", at: now, landed: true},
			reason: kueue.ReasonPending, message: "ClusterQueue cq is inactive", want: writeNow},
		{name: "new numbers too soon", queued: &queuedVerdict{reason: kueue.ReasonWaitingForQuota, message: "available 1", at: now.Add(-time.Second)},
			reason: kueue.ReasonWaitingForQuota, message: "available 2", want: writeLater},
		{name: "new numbers after the refresh interval", queued: &queuedVerdict{reason: kueue.ReasonWaitingForQuota, message: "available 1", at: now.Add(-time.Minute)},
			reason: kueue.ReasonWaitingForQuota, message: "available 2", want: writeNow},
		{name: "new numbers, refresh budget spent", queued: &queuedVerdict{reason: kueue.ReasonWaitingForQuota, message: "available 1", at: now.Add(-time.Minute)},
			budget: rate.NewLimiter(0, 0), reason: kueue.ReasonWaitingForQuota, message: "available 2", want: writeLater},
		{name: "a new reason ignores interval and budget", queued: &queuedVerdict{reason: kueue.ReasonWaitingForQuota, message: "available 1", at: now},
			budget: rate.NewLimiter(0, 0), reason: kueue.ReasonPending, message: "LocalQueue lq is stopped", want: writeNow},
		{name: "numbers older than this manager, budget spent", conditions: []metav1.Condition{waitingFor("available 1")},
			budget: rate.NewLimiter(0, 0), reason: kueue.ReasonWaitingForQuota, message: "available 2", want: writeLater},
		{name: "reason older than this manager changes", conditions: []metav1.Condition{waitingFor("available 1")},
			budget: rate.NewLimiter(0, 0), reason: kueue.ReasonExceedsMaxQuota, message: "never", want: writeNow},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := &Verdicts{Workloads: &Workloads{Tracker: NewTracker(), Clock: clocktesting.NewFakeClock(now)}, Refresh: 5 * time.Second,
				queued: map[string]queuedVerdict{}, budget: tc.budget}
			wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w", ResourceVersion: "1"}}
			wl.Status.Conditions = tc.conditions
			info := &workload.Info{Key: "ns/w", Obj: wl}
			if tc.queued != nil {
				v.queued[info.Key] = *tc.queued
			}
			got := v.due(scheduler.Decision{Info: info, Reason: tc.reason, Message: tc.message})
			if got != tc.want {
				t.Errorf("due = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestVerdictGrace(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(10_000, 0))
	v := &Verdicts{Workloads: &Workloads{Tracker: NewTracker(), Clock: clk}, Grace: 2 * time.Second, Refresh: 5 * time.Second,
		queued: map[string]queuedVerdict{}}
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w", ResourceVersion: "1"}}
	d := scheduler.Decision{Info: &workload.Info{Key: "ns/w", Obj: wl, QueueTime: clk.Now().Add(-time.Second)},
		Reason: kueue.ReasonWaitingForQuota, Message: "available 1"}
	if got := v.due(d); got != writeLater {
		t.Fatalf("a workload queued 1s ago: due = %v, want later (grace 2s)", got)
	}
	if got := v.wait(d); got != time.Second {
		t.Fatalf("wait = %s, want the second left of the grace", got)
	}
	clk.Step(time.Second)
	if got := v.due(d); got != writeNow {
		t.Fatalf("after the grace: due = %v, want now", got)
	}
	// A reason that replaces a written one is not held by the grace.
	wl.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionFalse, Reason: kueue.ReasonPending, Message: "stopped"}}
	d.Info.QueueTime = clk.Now()
	if got := v.due(d); got != writeNow {
		t.Fatalf("a new reason within the grace: due = %v, want now", got)
	}
}

func TestVerdictBudgetBooksSlots(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(10_000, 0))
	v := &Verdicts{Workloads: &Workloads{Tracker: NewTracker(), Clock: clk}, Refresh: 5 * time.Second,
		queued: map[string]queuedVerdict{}, budget: rate.NewLimiter(2, 1)}
	decision := func(name string) scheduler.Decision {
		wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: "1"}}
		return scheduler.Decision{Info: &workload.Info{Key: "ns/" + name, Obj: wl, QueueTime: clk.Now().Add(-time.Minute)},
			Reason: kueue.ReasonWaitingForQuota, Message: "available 1"}
	}
	a, b, c := decision("a"), decision("b"), decision("c")
	if v.due(a) != writeNow {
		t.Fatal("the first verdict did not get the free slot")
	}
	if v.due(b) != writeLater || v.due(c) != writeLater {
		t.Fatal("verdicts beyond the budget were not held")
	}
	if got, want := v.wait(b), 500*time.Millisecond; got != want {
		t.Fatalf("b waits %s, want its booked slot in %s (2/s)", got, want)
	}
	if got, want := v.wait(c), time.Second; got != want {
		t.Fatalf("c waits %s, want its booked slot in %s", got, want)
	}
	clk.Step(500 * time.Millisecond)
	if v.due(b) != writeNow {
		t.Fatal("b's booked slot came and it was not written")
	}
	if v.due(c) != writeLater {
		t.Fatal("c was written before its slot")
	}
}

func TestVerdictBudgetBooksNoFurtherThanARefresh(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(10_000, 0))
	v := &Verdicts{Workloads: &Workloads{Tracker: NewTracker(), Clock: clk}, Refresh: time.Second,
		queued: map[string]queuedVerdict{}, budget: rate.NewLimiter(2, 1)}
	booked := 0
	for i := range 10 {
		key := fmt.Sprintf("ns/w%d", i)
		if v.takeSlot(key) {
			continue
		}
		if _, ok := v.slots[key]; ok {
			booked++
		}
	}
	// One free slot, then two within the refresh (at 0.5s and 1s); the
	// others book nothing and try again at the refresh.
	if booked != 2 {
		t.Fatalf("%d slots booked, want the 2 within a refresh", booked)
	}
}

// A workload behind the heads of its ClusterQueue gets no verdict to wait
// for room, unless it still shows a reason that is over: after its queue was
// inactive (at a restart, before the queue was evaluated) it would otherwise
// say so for as long as it waits.
func TestVerdictBehindTheHeads(t *testing.T) {
	condition := func(reason string) []metav1.Condition {
		return []metav1.Condition{{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionFalse, Reason: reason, Message: "m"}}
	}
	cases := []struct {
		name       string
		conditions []metav1.Condition
		queued     string
		rank       int
		reason     string
		want       bool
	}{
		{name: "the head", rank: 0, reason: kueue.ReasonWaitingForQuota, want: false},
		{name: "behind, never told", rank: 3, reason: kueue.ReasonWaitingForQuota, want: true},
		{name: "behind, told to wait for quota", rank: 3, conditions: condition(kueue.ReasonWaitingForPreemptedWorkloads),
			reason: kueue.ReasonWaitingForQuota, want: true},
		{name: "behind, told its queue is inactive", rank: 3, conditions: condition(kueue.ReasonPending),
			reason: kueue.ReasonWaitingForQuota, want: false},
		{name: "behind, told its queue is inactive by a write on its way", rank: 3, queued: kueue.ReasonPending,
			reason: kueue.ReasonWaitingForQuota, want: false},
		{name: "behind, another reason", rank: 3, reason: kueue.ReasonExceedsMaxQuota, want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := &Verdicts{Workloads: &Workloads{Tracker: NewTracker()}, Heads: 1, queued: map[string]queuedVerdict{}}
			wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w", ResourceVersion: "1"}}
			wl.Status.Conditions = tc.conditions
			info := &workload.Info{Key: "ns/w", Obj: wl}
			if tc.queued != "" {
				v.queued[info.Key] = queuedVerdict{reason: tc.queued}
			}
			d := scheduler.Decision{Info: info, ClusterQueue: "cq", Reason: tc.reason}
			if got := v.behindHeads(d, tc.rank); got != tc.want {
				t.Errorf("behindHeads = %v, want %v", got, tc.want)
			}
		})
	}
}

// A verdict decided while an admission of the workload is unsettled (its
// write was refused and the read that settles it is on its way) is not
// written. It must not be remembered as sent either: the same verdict,
// decided again once the admission settled, would never be written (a
// HoldAndDrain workload then kept its eviction message for good).
func TestVerdictSkippedWhileAnAdmissionIsUnsettledIsWrittenLater(t *testing.T) {
	tr := NewTracker()
	tr.Observe(at("1", false))
	tr.Refused("ns/w", assumeQueued(t, tr))
	v := &Verdicts{Workloads: &Workloads{Tracker: tr, Clock: clocktesting.NewFakeClock(time.Unix(10_000, 0))},
		Refresh: 5 * time.Second, queued: map[string]queuedVerdict{}}
	d := scheduler.Decision{Info: &workload.Info{Key: "ns/w", Obj: at("1", false)},
		Reason: kueue.ReasonPending, Message: "ClusterQueue cq is inactive: stopPolicy is HoldAndDrain"}
	if got := v.due(d); got != writeNow {
		t.Fatalf("due = %v, want now", got)
	}
	v.remember(d) // as Offer does, queueing the write
	if got := v.write(context.Background(), d); got != Done {
		t.Fatalf("the write while the admission is unsettled = %v, want done (skipped)", got)
	}
	tr.Observe(at("2", false)) // the watch settles the refused admission
	d.Info.Obj = at("2", false)
	if got := v.due(d); got != writeNow {
		t.Fatalf("once settled, due = %v, want now: the skipped verdict was taken as sent", got)
	}
}

// A verdict the Dispatcher drops unwritten, because an urgent write of the
// workload is queued (a reconciler's write that may change nothing, so
// that no event requeues it), is not taken as sent, and its parked
// workload is decided again: a HoldAndDrain workload otherwise kept its
// eviction message for good.
func TestVerdictDroppedUnwrittenIsDecidedAgain(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(10_000, 0))
	d, _ := newTestDispatcher(4, 1)
	tr := NewTracker()
	tr.Observe(at("1", false))
	pending := tr.Queues.Pending()
	if len(pending) != 1 {
		t.Fatalf("pending = %v, want the workload", pending)
	}
	tr.Queues.Park(pending[0], "cq", tr.Queues.Requeues())
	v := &Verdicts{Workloads: &Workloads{Tracker: tr, Dispatcher: d, Clock: clk}, Refresh: 5 * time.Second}
	decision := scheduler.Decision{Info: pending[0],
		Reason: kueue.ReasonPending, Message: "ClusterQueue cq is inactive: stopPolicy is HoldAndDrain"}
	v.Offer(decision, 0)
	d.Add(write(workloadObject("ns/w"), "deactivation-target", Urgent))
	if kinds := takeAll(d); len(kinds) != 1 || kinds[0] != workloadObject("ns/w")+":deactivation-target" {
		t.Fatalf("writes = %v, want only the urgent one", kinds)
	}
	if got := v.due(decision); got != writeNow {
		t.Fatalf("after the verdict was dropped, due = %v, want now", got)
	}
	if len(tr.Queues.Pending()) != 0 {
		t.Fatal("the workload was requeued before its time")
	}
	clk.Step(reconsiderAfter)
	deadline := time.Now().Add(5 * time.Second)
	for len(tr.Queues.Pending()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the workload whose verdict was dropped was never decided again")
		}
		time.Sleep(time.Millisecond) // polls the timer's goroutine
	}
	v.Offer(decision, 0)
	if kinds := takeAll(d); len(kinds) != 1 || kinds[0] != workloadObject("ns/w")+":"+writePending {
		t.Fatalf("writes = %v, want the pending verdict", kinds)
	}
}
