package controller

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

func TestDeactivatedBySluice(t *testing.T) {
	at := metav1.NewTime(time.Unix(1000, 0))
	evicted := func(reason string) []metav1.Condition {
		return []metav1.Condition{{Type: kueue.WorkloadEvicted, Status: metav1.ConditionTrue, Reason: reason, LastTransitionTime: at}}
	}
	cases := []struct {
		name       string
		active     *bool
		conditions []metav1.Condition
		want       bool
	}{
		{name: "past its execution time", active: ptr.To(false), conditions: evicted(kueue.EvictedByMaximumExecutionTime), want: true},
		{name: "deactivated by Kueue before the switch", active: ptr.To(false), conditions: evicted("DeactivatedDueToRequeuingLimitExceeded"), want: true},
		{name: "deactivated by its user", active: ptr.To(false), conditions: evicted(kueue.EvictedByDeactivation)},
		{name: "active again", conditions: evicted(kueue.EvictedByMaximumExecutionTime)},
		{name: "inactive, not evicted", active: ptr.To(false)},
		{name: "preempted", active: ptr.To(false), conditions: evicted(kueue.EvictedByPreemption)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wl := &kueue.Workload{Spec: kueue.WorkloadSpec{Active: tc.active}}
			wl.Status.Conditions = tc.conditions
			since, got := deactivatedBySluice(wl)
			if got != tc.want || (got && !since.Equal(at.Time)) {
				t.Errorf("deactivatedBySluice = %v, %v; want %v, %v", since, got, tc.want, at)
			}
		})
	}
}
