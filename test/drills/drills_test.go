//go:build drills

package drills

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// maxRecovery is (F): once a fault is over, a workload that fits waits at
// most this long.
const maxRecovery = 60 * time.Second

// burst is the load of most drills: jobs of 1 CPU for 2s, one every 50ms,
// against a queue of 16 CPUs: a backlog builds, so admissions go on
// throughout the fault.
func burst(i int) jobSpec {
	return jobSpec{name: fmt.Sprintf("job-%04d", i), cpu: "1", runFor: "2s"}
}

// underLoad starts a drill's cluster with two managers (a leading, b on
// standby), its queues, the checker and a burst of jobs, and returns once
// admitted workloads were admitted: the fault goes in mid-burst.
func underLoad(t *testing.T, jobs, admitted int) (*drillCluster, *managerProc, *managerProc, *checker, *load) {
	t.Helper()
	d := startDrillCluster(t)
	a := d.startManager("manager-a")
	d.setupQueues("16")
	d.waitLeader(a, time.Minute)
	b := d.startManager("manager-b")
	c := d.startChecker(teamNamespace)
	l := d.startLoad(jobs, 50*time.Millisecond, burst)
	d.waitAdmissions(c, admitted)
	return d, a, b, c, l
}

// fault is a window of a drill, for its figures.
type fault struct {
	name       string
	start, end time.Time
}

// finish waits for the load to complete and checks every invariant:
// nothing lost, (Q), (P), (E) throughout, (F) after the last fault, (Z) at
// the end; it logs the figures.
func (d *drillCluster) finish(c *checker, l *load, faults ...fault) {
	d.t.Helper()
	if len(faults) > 0 {
		c.faultsOver(faults[len(faults)-1].end)
	}
	if err := l.waitCreated(5 * time.Minute); err != nil {
		d.t.Error(err)
	}
	lost := d.waitComplete(l, 5*time.Minute)
	checks, admissions, evictions, violations := c.result()
	d.t.Logf("checked (Q) and (P) %d times, (E) on %d admissions and %d evictions; %d Jobs created (%d creations refused and retried)",
		checks, admissions, evictions, l.created.Load(), l.refused.Load())
	for _, f := range faults {
		d.t.Logf("%s: %.1fs; manager writes during it: %.1f/s (%.1f/s outside faults)", f.name, f.end.Sub(f.start).Seconds(),
			d.writeRate(f.start, f.end), d.writeRateOutside(faults))
	}
	if len(faults) > 0 {
		last := faults[len(faults)-1]
		d.t.Logf("recovery after %s: first admission %.1fs after it; a workload that fitted waited at most %.1fs past it ((F): at most %s)",
			last.name, d.firstAdmissionAfter(c, last.end).Seconds(), c.longestFitting().Seconds(), maxRecovery)
	}
	d.t.Logf("lost workloads: %d", lost)
	if lost > 0 {
		d.t.Errorf("%d Jobs did not complete", lost)
	}
	for _, v := range violations {
		d.t.Error(v)
	}
	if err := d.noFinalizersLeft(teamNamespace); err != nil {
		d.t.Error(err)
	} else {
		d.t.Log("(Z) every Workload, pod and Job went once the Jobs were deleted")
	}
}

// firstAdmissionAfter is how long after end the first admission came.
func (d *drillCluster) firstAdmissionAfter(c *checker, end time.Time) time.Duration {
	var first time.Duration = -1
	for _, at := range c.admissionTimes() {
		if at.After(end) && (first < 0 || at.Sub(end) < first) {
			first = at.Sub(end)
		}
	}
	return first
}

// restartCounts says how often each manager was started again.
func (d *drillCluster) restartCounts() string {
	var parts []string
	for _, m := range d.managers {
		m.mu.Lock()
		parts = append(parts, fmt.Sprintf("%s %d", m.name, m.restarts))
		m.mu.Unlock()
	}
	return strings.Join(parts, ", ")
}

// workWrites are the times of the managers' writes, lease renewals and
// events left out.
func (d *drillCluster) workWrites() []time.Time {
	var out []time.Time
	for _, m := range d.managers {
		for _, w := range m.api.writesOf() {
			if w.resource != "leases" && w.resource != "events" {
				out = append(out, w.at)
			}
		}
	}
	return out
}

// writeRate is the managers' writes per second between from and to.
func (d *drillCluster) writeRate(from, to time.Time) float64 {
	n := 0
	for _, at := range d.workWrites() {
		if at.After(from) && at.Before(to) {
			n++
		}
	}
	if secs := to.Sub(from).Seconds(); secs > 0 {
		return float64(n) / secs
	}
	return 0
}

// writeRateOutside is the write rate of the drill outside its faults.
func (d *drillCluster) writeRateOutside(faults []fault) float64 {
	var first, last time.Time
	n := 0
	for _, at := range d.workWrites() {
		if slices.ContainsFunc(faults, func(f fault) bool { return at.After(f.start) && at.Before(f.end) }) {
			continue
		}
		if first.IsZero() || at.Before(first) {
			first = at
		}
		if at.After(last) {
			last = at
		}
		n++
	}
	span := last.Sub(first)
	for _, f := range faults {
		span -= f.end.Sub(f.start)
	}
	if span <= 0 {
		return 0
	}
	return float64(n) / span.Seconds()
}

// waitLeader waits until m holds the lease.
func (d *drillCluster) waitLeader(m *managerProc, timeout time.Duration) {
	d.t.Helper()
	d.eventually(m.name+" to lead", timeout, func(context.Context) (bool, error) { return d.leader() == m, nil })
}

// waitLeaderSince waits until a manager holds the lease by a renewal that
// landed after t, and returns it.
func (d *drillCluster) waitLeaderSince(t time.Time, timeout time.Duration) *managerProc {
	d.t.Helper()
	var leader *managerProc
	d.eventually("a manager to lead", timeout, func(context.Context) (bool, error) {
		for _, m := range d.managers {
			for _, w := range m.api.writesOf() {
				if w.at.After(t) && w.resource == "leases" && w.landed() {
					leader = m
					return true, nil
				}
			}
		}
		return false, nil
	})
	return leader
}

// waitAdmissions waits until n workloads have been admitted.
func (d *drillCluster) waitAdmissions(c *checker, n int) {
	d.t.Helper()
	d.eventually(fmt.Sprintf("%d admissions", n), 2*time.Minute, func(context.Context) (bool, error) {
		_, admissions, _, _ := c.result()
		return admissions >= n, nil
	})
}

// firstWrite is when m's first landed write after t reached the API
// server (lease renewals and events left out).
func firstWrite(m *managerProc, after time.Time) (time.Time, bool) {
	for _, w := range m.api.writesOf() {
		if w.at.After(after) && w.landed() && w.resource != "leases" && w.resource != "events" {
			return w.at, true
		}
	}
	return time.Time{}, false
}

// SIGKILL the leader while Jobs arrive: another manager (the standby, or
// the killed one started again) takes over, nothing is lost or admitted
// twice.
func TestDrillKillLeader(t *testing.T) {
	d, a, _, c, l := underLoad(t, 300, 60)
	start := time.Now()
	if err := a.signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The standby, or the killed manager started again (a second later,
	// as a kubelet would): whichever polls first once the lease expired.
	next := d.waitLeaderSince(start.Add(time.Second), time.Minute)
	end := time.Now()
	t.Logf("%s took over %.1fs after manager-a was killed (lease %s; manager-b was the standby)", next.name, end.Sub(start).Seconds(), leaseDuration)
	d.finish(c, l, fault{"leader killed until the standby leads", start, end})
}

// SIGSTOP the leader past its lease, let the standby take over, then let
// the old leader run again: it must not land a single write after the new
// leader's first.
func TestDrillFreezeLeader(t *testing.T) {
	d, a, b, c, l := underLoad(t, 300, 60)
	start := time.Now()
	if err := a.signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	d.waitLeader(b, time.Minute)
	var bFirst time.Time
	d.eventually("manager-b's first write", time.Minute, func(context.Context) (bool, error) {
		var ok bool
		bFirst, ok = firstWrite(b, start)
		return ok, nil
	})
	// Let the new leader work a little, then wake the old one.
	d.waitAdmissions(c, 120)
	resumed := time.Now()
	frozen := a.current()
	if err := a.signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	// The old leader finds it lost the lease and stops; its writes
	// attempted meanwhile are what the fence is for.
	select {
	case <-frozen.Exited():
	case <-time.After(30 * time.Second):
		t.Error("the old leader did not stop within 30s of finding its lease lost")
	}
	end := time.Now()
	late, attempted := 0, 0
	for _, w := range a.api.writesOf() {
		if w.resource == "leases" || w.resource == "events" || !w.at.After(resumed) {
			continue
		}
		attempted++
		if w.landed() && w.at.After(bFirst) {
			late++
			t.Errorf("the old leader landed %s %s at %s, after the new leader's first write at %s",
				w.method, w.resource, w.at.Format("15:04:05.000"), bFirst.Format("15:04:05.000"))
		}
	}
	fenced := 0
	if data, err := os.ReadFile(frozen.LogPath()); err == nil {
		fenced = strings.Count(string(data), "does not surely hold the leader lease")
	}
	t.Logf("manager-a frozen %.1fs; after it ran again it sent %d writes to the API server, %d landed after manager-b's first; its fence held back %d",
		resumed.Sub(start).Seconds(), attempted, late, fenced)
	d.finish(c, l, fault{"leader frozen until it stopped", start, end})
}

// Lose the answers to 20% of status writes (the writes land), then answer
// nothing at all for 30s.
func TestDrillLostAnswersAndBlackhole(t *testing.T) {
	d, a, b, c, l := underLoad(t, 600, 40)
	dropStart := time.Now()
	for _, m := range d.managers {
		m.api.setDropStatus(0.2)
	}
	// The fault lasts for the next 100 admissions.
	d.waitAdmissions(c, 140)
	for _, m := range d.managers {
		m.api.setDropStatus(0)
	}
	dropEnd := time.Now()
	dropped := a.api.droppedAnswers() + b.api.droppedAnswers()
	holeStart := time.Now()
	for _, m := range d.managers {
		m.api.blackhole(30 * time.Second)
	}
	d.eventually("the blackhole to end", time.Minute, func(context.Context) (bool, error) { return time.Since(holeStart) > 30*time.Second, nil })
	holeEnd := time.Now()
	t.Logf("answers lost to status writes that landed: %d; manager restarts: %s", dropped, d.restartCounts())
	d.finish(c, l, fault{"20% of status answers lost", dropStart, dropEnd}, fault{"API blackholed", holeStart, holeEnd})
}

// Kill kube-apiserver and start it again under load, then etcd.
func TestDrillRestartControlPlane(t *testing.T) {
	d, _, _, c, l := underLoad(t, 600, 40)
	var faults []fault
	for _, component := range []string{"kube-apiserver", "etcd"} {
		start := time.Now()
		d.restart(component, 10*time.Second)
		faults = append(faults, fault{component + " killed and started again", start, time.Now()})
		_, admitted, _, _ := c.result()
		d.waitAdmissions(c, admitted+40)
	}
	t.Logf("manager restarts (each exits when it loses its lease): %s", d.restartCounts())
	d.finish(c, l, faults...)
}

// The webhook server down: pods in namespaces sluice does not manage are
// still created, queued objects are refused at once with a clear message,
// and the manager does not storm the API server.
func TestDrillWebhookDown(t *testing.T) {
	d := startDrillCluster(t)
	a := d.startManager("manager-a")
	d.setupQueues("16")
	d.waitLeader(a, time.Minute)
	c := d.startChecker(teamNamespace)
	l := d.startLoad(300, 50*time.Millisecond, burst)
	d.waitAdmissions(c, 40)
	start := time.Now()
	d.webhooks.setDown(true)
	// Unmanaged namespace: created as if sluice weren't there.
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: "unmanaged"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}
	began := time.Now()
	if err := d.client.Create(d.ctx, pod); err != nil {
		t.Errorf("a pod in %s was refused while sluice's webhook was down: %v", metav1.NamespaceSystem, err)
	}
	t.Logf("pod in an unmanaged namespace created in %s", time.Since(began).Round(time.Millisecond))
	// Queued: refused, promptly, saying why.
	job := jobSpec{name: "while-down", cpu: "1", runFor: "1s"}.job()
	began = time.Now()
	err := d.client.Create(d.ctx, job)
	took := time.Since(began)
	switch {
	case err == nil:
		t.Error("a queued Job was created while the webhook that suspends it was down")
	case !strings.Contains(err.Error(), "webhook"):
		t.Errorf("a queued Job was refused without naming the webhook: %v", err)
	default:
		t.Logf("queued Job refused in %s: %v", took.Round(time.Millisecond), err)
	}
	if took > 12*time.Second {
		t.Errorf("refusing a queued Job took %s: the API server waited on the webhook", took)
	}
	d.eventually("30s of webhook outage", time.Minute, func(context.Context) (bool, error) { return time.Since(start) > 30*time.Second, nil })
	d.webhooks.setDown(false)
	end := time.Now()
	rate := d.writeRate(start, end)
	if rate > 50 {
		t.Errorf("the manager wrote %.1f/s while the webhook was down: a write storm", rate)
	}
	d.finish(c, l, fault{"webhook server down", start, end})
}

// judgedSoak is the shortest soak whose heap trend is judged.
const judgedSoak = 20 * time.Minute

// soakDuration is how long the soak runs: 20 minutes by default,
// SLUICE_SOAK (a Go duration) to change it.
func soakDuration(t *testing.T) time.Duration {
	if v := os.Getenv("SLUICE_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("SLUICE_SOAK: %v", err)
		}
		return d
	}
	return 20 * time.Minute
}

// A soak: Jobs arrive for the soak's duration (a few thousand over 20
// minutes), run, complete and are deleted; every tenth has a higher
// priority and preempts. The manager's heap and goroutines must be flat.
func TestDrillSoak(t *testing.T) {
	duration := soakDuration(t)
	d := startDrillCluster(t)
	a := d.startManager("manager-a")
	d.setupQueues("24")
	if err := d.client.Create(d.ctx, &kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000}); err != nil {
		t.Fatal(err)
	}
	d.waitLeader(a, time.Minute)
	c := d.startChecker(teamNamespace)
	interval := 400 * time.Millisecond
	count := int(duration / interval)
	l := d.startLoad(count, interval, func(i int) jobSpec {
		s := jobSpec{name: fmt.Sprintf("job-%05d", i), cpu: fmt.Sprint(1 + i%2), runFor: fmt.Sprintf("%ds", 2+i%9)}
		if i%10 == 9 {
			s.priority = "high"
		}
		s.ttl = true
		return s
	})
	// Sampled every 5s; the trend is fitted on each minute's lowest
	// reading (the heap just after a collection: what is live) over the
	// second half (the first fills the caches, and the event recorder's
	// bounded cache of recent events).
	var heap, goroutines []sample
	ticker := time.NewTicker(5 * time.Second)
	defer ticker.Stop()
sampling:
	for {
		select {
		case <-l.done:
			break sampling
		case <-ticker.C:
		}
		at := time.Now()
		if v, err := a.metric(d.ctx, "go_memstats_heap_alloc_bytes"); err == nil {
			heap = append(heap, sample{at, v})
		}
		if v, err := a.metric(d.ctx, "go_goroutines"); err == nil {
			goroutines = append(goroutines, sample{at, v})
		}
	}
	heapMin, goMin := perMinuteLowest(heap), perMinuteLowest(goroutines)
	heapSlope, heapMean := trend(heapMin)
	goSlope, goMean := trend(goroutines)
	var mib []string
	for _, s := range heapMin {
		mib = append(mib, fmt.Sprintf("%.1f", s.value/(1<<20)))
	}
	t.Logf("soak: %d Jobs over %s; live heap by minute (MiB): %s; slope %+.2f MiB/min; goroutines %.0f mean (lowest by minute %v), slope %+.2f/min",
		count, duration, strings.Join(mib, " "), heapSlope*60/(1<<20), goMean, values(goMin), goSlope*60)
	half := duration.Minutes() / 2
	switch growth := heapSlope * 60 * half; {
	case duration < judgedSoak:
		// client-go's event recorder keeps the events of the last 6 to 12
		// minutes (for series): a heap that holds them grows for 12
		// minutes, then saws. A shorter soak cannot tell that from a leak.
		t.Logf("soak shorter than %s: the heap's trend is reported, not judged", judgedSoak)
	case growth > 0.25*heapMean:
		t.Errorf("the live heap grew %.1f MiB over the second half (%.0f%% of its mean): not flat", growth/(1<<20), 100*growth/heapMean)
	}
	if growth := goSlope * 60 * half; growth > 0.10*goMean+5 {
		t.Errorf("goroutines grew by %.0f over the second half: not flat", growth)
	}
	_, _, evictions, _ := c.result()
	t.Logf("soak evictions (preemptions by the high-priority Jobs): %d", evictions)
	d.finish(c, l)
}

// sample is one reading of a manager metric.
type sample struct {
	at    time.Time
	value float64
}

// perMinuteLowest keeps each minute's lowest sample.
func perMinuteLowest(samples []sample) []sample {
	var out []sample
	for _, s := range samples {
		if len(out) == 0 || s.at.Sub(samples[0].at) >= time.Duration(len(out))*time.Minute {
			out = append(out, s)
			continue
		}
		if last := &out[len(out)-1]; s.value < last.value {
			*last = s
		}
	}
	return out
}

func values(samples []sample) []float64 {
	out := make([]float64, len(samples))
	for i, s := range samples {
		out[i] = s.value
	}
	return out
}

// trend fits a line to the second half of the samples: its slope per
// second and the mean.
func trend(samples []sample) (slope, mean float64) {
	if len(samples) < 4 {
		return 0, 0
	}
	s := samples[len(samples)/2:]
	var sx, sy, sxx, sxy float64
	n := float64(len(s))
	for _, p := range s {
		x := p.at.Sub(s[0].at).Seconds()
		sx += x
		sy += p.value
		sxx += x * x
		sxy += x * p.value
	}
	if den := n*sxx - sx*sx; den != 0 {
		slope = (n*sxy - sx*sy) / den
	}
	return slope, sy / n
}
