package framework

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// ActiveAdmissionCheck creates an AdmissionCheck of a third-party
// controller and marks it Active, as that controller would.
func (c *Cluster) ActiveAdmissionCheck(t testing.TB, controllerName string) *kueue.AdmissionCheck {
	t.Helper()
	ac := &kueue.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: c.Unique("check")}, Spec: kueue.AdmissionCheckSpec{ControllerName: controllerName}}
	c.MustCreate(t, ac)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Client.Get(context.Background(), client.ObjectKeyFromObject(ac), ac); err != nil {
			return err
		}
		meta.SetStatusCondition(&ac.Status.Conditions, metav1.Condition{Type: kueue.ConditionActive, Status: metav1.ConditionTrue,
			Reason: "Active", Message: "the check's controller runs"})
		return c.Client.Status().Update(context.Background(), ac)
	})
	if err != nil {
		t.Fatalf("activating AdmissionCheck %s: %v", ac.Name, err)
	}
	return ac
}

// SetCheck writes the state of one admission check of a Workload the way
// a check controller does (a status write of its entry), after mutate
// changes the entry further (message, podSetUpdates, requeueAfterSeconds).
func (c *Cluster) SetCheck(t testing.TB, wl *kueue.Workload, check string, state kueue.CheckState, mutate func(*kueue.AdmissionCheckState)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		current := &kueue.Workload{}
		if err := c.Client.Get(context.Background(), client.ObjectKeyFromObject(wl), current); err != nil {
			return err
		}
		for i := range current.Status.AdmissionChecks {
			entry := &current.Status.AdmissionChecks[i]
			if entry.Name != check {
				continue
			}
			if entry.State != state {
				entry.State, entry.LastTransitionTime = state, metav1.Now()
			}
			if mutate != nil {
				mutate(entry)
			}
			return c.Client.Status().Update(context.Background(), current)
		}
		return fmt.Errorf("workload %s has no admission check %s: %+v", wl.Name, check, current.Status.AdmissionChecks)
	})
	if err != nil {
		t.Fatalf("setting admission check %s of %s to %s: %v", check, wl.Name, state, err)
	}
}

// WaitWorkload waits until cond holds for the Workload and returns it.
func (c *Cluster) WaitWorkload(t testing.TB, wl *kueue.Workload, what string, cond func(*kueue.Workload) error) *kueue.Workload {
	t.Helper()
	current := &kueue.Workload{}
	Eventually(t, fmt.Sprintf("workload %s %s", wl.Name, what), func(ctx context.Context) (bool, error) {
		if err := c.Client.Get(ctx, client.ObjectKeyFromObject(wl), current); err != nil {
			return false, err
		}
		return true, cond(current)
	})
	return current
}

// CheckStates are a Workload's admission checks as name=state.
func CheckStates(wl *kueue.Workload) map[string]kueue.CheckState {
	out := map[string]kueue.CheckState{}
	for _, c := range wl.Status.AdmissionChecks {
		out[c.Name] = c.State
	}
	return out
}

// ConditionIs matches a Workload whose condition typ has status, reason
// ("" for any) and a message containing every part.
func ConditionIs(typ string, status metav1.ConditionStatus, reason string, parts ...string) func(*kueue.Workload) error {
	return func(wl *kueue.Workload) error {
		c := meta.FindStatusCondition(wl.Status.Conditions, typ)
		if c == nil || c.Status != status || (reason != "" && c.Reason != reason) {
			return fmt.Errorf("%s: %+v", typ, c)
		}
		for _, p := range parts {
			if !strings.Contains(c.Message, p) {
				return fmt.Errorf("%s message %q lacks %q", typ, c.Message, p)
			}
		}
		return nil
	}
}
