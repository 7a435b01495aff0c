package workload

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// Reasons of the Admitted condition while quota is reserved.
const (
	// ReasonUnsatisfiedAdmissionChecks: quota is reserved and some
	// admission check is not Ready yet.
	ReasonUnsatisfiedAdmissionChecks = "UnsatisfiedAdmissionChecks"
)

// NeededChecks are the admission checks a ClusterQueue's strategy asks of
// an admission, sorted: a rule without onFlavors always applies, one with
// them when some pod set was assigned one of those flavors.
func NeededChecks(strategy *kueue.AdmissionChecksStrategy, adm *kueue.Admission) []string {
	if strategy == nil || adm == nil {
		return nil
	}
	var names []string
	for _, rule := range strategy.AdmissionChecks {
		if len(rule.OnFlavors) == 0 || assignsAny(adm, rule.OnFlavors) {
			names = append(names, rule.Name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

func assignsAny(adm *kueue.Admission, flavors []kueue.ResourceFlavorReference) bool {
	for _, psa := range adm.PodSetAssignments {
		for _, f := range psa.Flavors {
			if slices.Contains(flavors, f) {
				return true
			}
		}
	}
	return false
}

// SyncChecks makes status.admissionChecks list exactly the needed checks:
// a new one starts Pending, one no longer needed goes. It reports whether
// anything changed.
func SyncChecks(wl *kueue.Workload, needed []string, now time.Time) bool {
	changed := false
	kept := wl.Status.AdmissionChecks[:0:0]
	for _, c := range wl.Status.AdmissionChecks {
		if slices.Contains(needed, c.Name) {
			kept = append(kept, c)
		} else {
			changed = true
		}
	}
	for _, name := range needed {
		if !slices.ContainsFunc(kept, func(c kueue.AdmissionCheckState) bool { return c.Name == name }) {
			kept = append(kept, kueue.AdmissionCheckState{Name: name, State: kueue.CheckStatePending, LastTransitionTime: metav1.NewTime(now)})
			changed = true
		}
	}
	if changed {
		slices.SortFunc(kept, func(a, b kueue.AdmissionCheckState) int { return strings.Compare(a.Name, b.Name) })
		wl.Status.AdmissionChecks = kept
		if len(kept) == 0 {
			wl.Status.AdmissionChecks = nil
		}
	}
	return changed
}

// ResetChecks puts every check back to Pending for a new attempt: what a
// check said of the last reservation (its message and pod-set updates)
// does not carry over; its retry count does.
func ResetChecks(wl *kueue.Workload, now time.Time) {
	for i := range wl.Status.AdmissionChecks {
		c := &wl.Status.AdmissionChecks[i]
		if c.State != kueue.CheckStatePending {
			c.LastTransitionTime = metav1.NewTime(now)
		}
		c.State, c.Message, c.PodSetUpdates, c.RequeueAfterSeconds = kueue.CheckStatePending, "", nil, nil
	}
}

// ChecksIn are the checks of a workload in a state.
func ChecksIn(wl *kueue.Workload, state kueue.CheckState) []kueue.AdmissionCheckState {
	var out []kueue.AdmissionCheckState
	for _, c := range wl.Status.AdmissionChecks {
		if c.State == state {
			out = append(out, c)
		}
	}
	return out
}

// AllChecksReady tells whether every admission check of a workload is Ready
// (true when it has none).
func AllChecksReady(wl *kueue.Workload) bool {
	return !slices.ContainsFunc(wl.Status.AdmissionChecks, func(c kueue.AdmissionCheckState) bool { return c.State != kueue.CheckStateReady })
}

// SyncAdmitted sets Admitted to whether the workload holds a reservation
// and every check is Ready; while checks are not, its message names each
// one with its state and since when (stuckAfter > 0 adds, to a check
// waiting at least that long, how long in steps of stuckAfter doubling:
// the message changes a bounded number of times). The time admitted ends
// adds to accumulatedPastExecutionTimeSeconds. It reports whether anything
// changed.
func SyncAdmitted(wl *kueue.Workload, now time.Time, stuckAfter time.Duration) bool {
	reserved := HasQuotaReservation(wl)
	want := metav1.Condition{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, Reason: reasonAdmitted,
		ObservedGeneration: wl.Generation, LastTransitionTime: metav1.NewTime(now)}
	switch {
	case !reserved:
		want.Status, want.Reason, want.Message = metav1.ConditionFalse, reasonNoReservation, "The workload has no reservation"
	case !AllChecksReady(wl):
		want.Status, want.Reason, want.Message = metav1.ConditionFalse, ReasonUnsatisfiedAdmissionChecks, WaitingChecksMessage(wl, now, stuckAfter)
	default:
		want.Message = fmt.Sprintf("The workload is admitted by ClusterQueue %s", wl.Status.Admission.ClusterQueue)
	}
	have := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadAdmitted)
	if have != nil && have.Status == want.Status && have.Reason == want.Reason && have.Message == want.Message {
		return false
	}
	if have != nil && have.Status == metav1.ConditionTrue && want.Status == metav1.ConditionFalse {
		addPastExecution(wl, now.Sub(have.LastTransitionTime.Time))
	}
	meta.SetStatusCondition(&wl.Status.Conditions, want)
	return true
}

// WaitingChecksMessage says which checks a reserved workload waits for,
// each with its state, since when, and (past stuckAfter) for how long.
func WaitingChecksMessage(wl *kueue.Workload, now time.Time, stuckAfter time.Duration) string {
	var parts []string
	for _, c := range wl.Status.AdmissionChecks {
		if c.State == kueue.CheckStateReady {
			continue
		}
		part := fmt.Sprintf("%s is %s since %s", c.Name, c.State, c.LastTransitionTime.UTC().Format(time.RFC3339))
		if step := StuckStep(now.Sub(c.LastTransitionTime.Time), stuckAfter); step > 0 {
			part += fmt.Sprintf(" (for more than %s)", step)
		}
		if c.Message != "" {
			part += ": " + c.Message
		}
		parts = append(parts, part)
	}
	return "Quota is reserved; waiting for admission checks: " + strings.Join(parts, "; ")
}

// StuckStep is the largest stuckAfter·2^k not above age (0 below
// stuckAfter, or when stuckAfter is 0).
func StuckStep(age, stuckAfter time.Duration) time.Duration {
	if stuckAfter <= 0 || age < stuckAfter {
		return 0
	}
	step := stuckAfter
	for step <= age/2 {
		step *= 2
	}
	return step
}

// NextStuckStep is when the message of a check waiting since since next
// changes: the next stuckAfter·2^k after now (zero time without one).
func NextStuckStep(since, now time.Time, stuckAfter time.Duration) time.Time {
	if stuckAfter <= 0 {
		return time.Time{}
	}
	step := StuckStep(now.Sub(since), stuckAfter)
	if step == 0 {
		return since.Add(stuckAfter)
	}
	return since.Add(step * 2)
}

// RetryAt is when a workload with checks in Retry may queue again: the
// latest lastTransitionTime + requeueAfterSeconds among them (zero time:
// at once).
func RetryAt(wl *kueue.Workload) time.Time {
	var at time.Time
	for _, c := range ChecksIn(wl, kueue.CheckStateRetry) {
		if c.RequeueAfterSeconds == nil {
			continue
		}
		if t := c.LastTransitionTime.Add(time.Duration(*c.RequeueAfterSeconds) * time.Second); t.After(at) {
			at = t
		}
	}
	return at
}

// CountRetries adds one to the retry count of each check in Retry.
func CountRetries(wl *kueue.Workload) {
	for i := range wl.Status.AdmissionChecks {
		if c := &wl.Status.AdmissionChecks[i]; c.State == kueue.CheckStateRetry {
			c.RetryCount = ptr.To(ptr.Deref(c.RetryCount, 0) + 1)
		}
	}
}

// DescribeChecks renders checks as "name (message)" joined by ", ".
func DescribeChecks(checks []kueue.AdmissionCheckState) string {
	parts := make([]string, 0, len(checks))
	for _, c := range checks {
		if c.Message != "" {
			parts = append(parts, fmt.Sprintf("%s (%s)", c.Name, c.Message))
		} else {
			parts = append(parts, c.Name)
		}
	}
	return strings.Join(parts, ", ")
}

// addPastExecution adds ran to accumulatedPastExecutionTimeSeconds.
func addPastExecution(wl *kueue.Workload, ran time.Duration) {
	if ran <= 0 {
		return
	}
	total := ptr.Deref(wl.Status.AccumulatedPastExecutionTimeSeconds, 0) + int32(ran/time.Second)
	wl.Status.AccumulatedPastExecutionTimeSeconds = &total
}
