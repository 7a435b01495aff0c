package controller

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

func TestClusterQueueActive(t *testing.T) {
	now := metav1.Now()
	cases := []struct {
		name       string
		cq         kueue.ClusterQueue
		facts      clusterQueueFacts
		wantReason string
		wantInMsg  string
	}{
		{name: "ready", wantReason: kueue.ReasonReady},
		{name: "terminating wins", cq: kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}},
			facts: clusterQueueFacts{missingFlavors: []string{"a"}}, wantReason: kueue.ReasonTerminating},
		{name: "stopped", cq: kueue.ClusterQueue{Spec: kueue.ClusterQueueSpec{StopPolicy: ptr.To(kueue.StopPolicyHoldAndDrain)}},
			wantReason: kueue.ReasonStopped, wantInMsg: "HoldAndDrain"},
		{name: "stop policy None is not stopped", cq: kueue.ClusterQueue{Spec: kueue.ClusterQueueSpec{StopPolicy: ptr.To(kueue.StopPolicyNone)}},
			wantReason: kueue.ReasonReady},
		{name: "missing flavors", facts: clusterQueueFacts{missingFlavors: []string{"a", "b"}, missingChecks: []string{"c"}},
			wantReason: kueue.ReasonFlavorNotFound, wantInMsg: "a, b"},
		{name: "cycle", cq: kueue.ClusterQueue{Spec: kueue.ClusterQueueSpec{CohortName: "x"}},
			facts: clusterQueueFacts{cohortCycle: []string{"a", "b"}}, wantReason: kueue.ReasonCohortCycle, wantInMsg: "a -> b -> a"},
		{name: "missing check", facts: clusterQueueFacts{missingChecks: []string{"c"}, inactiveChecks: []string{"d"}},
			wantReason: kueue.ReasonAdmissionCheckNotFound, wantInMsg: "c"},
		{name: "inactive check", facts: clusterQueueFacts{inactiveChecks: []string{"d"}},
			wantReason: kueue.ReasonAdmissionCheckInactive, wantInMsg: "d"},
		{name: "a flavor with a topology", facts: clusterQueueFacts{topologyFlavors: []string{"tas (topology dc)"}, inactiveChecks: []string{"d"}},
			wantReason: kueue.ReasonNotImplemented, wantInMsg: "tas (topology dc): sluice does not implement topology-aware scheduling yet"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := clusterQueueActive(&tc.cq, tc.facts)
			wantStatus := metav1.ConditionFalse
			if tc.wantReason == kueue.ReasonReady {
				wantStatus = metav1.ConditionTrue
			}
			if got.Status != wantStatus || got.Reason != tc.wantReason {
				t.Errorf("got %s/%s (%s), want %s/%s", got.Status, got.Reason, got.Message, wantStatus, tc.wantReason)
			}
			if tc.wantInMsg != "" && !strings.Contains(got.Message, tc.wantInMsg) {
				t.Errorf("message %q does not contain %q", got.Message, tc.wantInMsg)
			}
		})
	}
}

func TestLocalQueueActive(t *testing.T) {
	active := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq"}, Status: kueue.ClusterQueueStatus{Conditions: []metav1.Condition{
		{Type: kueue.ConditionActive, Status: metav1.ConditionTrue, Reason: kueue.ReasonReady}}}}
	stopped := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq"}, Status: kueue.ClusterQueueStatus{Conditions: []metav1.Condition{
		{Type: kueue.ConditionActive, Status: metav1.ConditionFalse, Reason: kueue.ReasonStopped}}}}
	cases := []struct {
		name       string
		lq         kueue.LocalQueue
		cq         *kueue.ClusterQueue
		wantReason string
	}{
		{"ready", kueue.LocalQueue{}, active, kueue.ReasonReady},
		{"no cluster queue", kueue.LocalQueue{}, nil, kueue.ReasonClusterQueueDoesNotExist},
		{"cluster queue inactive", kueue.LocalQueue{}, stopped, kueue.ReasonClusterQueueIsInactive},
		{"cluster queue without condition yet", kueue.LocalQueue{}, &kueue.ClusterQueue{}, kueue.ReasonClusterQueueIsInactive},
		{"stopped", kueue.LocalQueue{Spec: kueue.LocalQueueSpec{StopPolicy: ptr.To(kueue.StopPolicyHold)}}, active, kueue.ReasonStopped},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := localQueueActive(&tc.lq, tc.cq); got.Reason != tc.wantReason {
				t.Errorf("reason %s (%s), want %s", got.Reason, got.Message, tc.wantReason)
			}
		})
	}
}
