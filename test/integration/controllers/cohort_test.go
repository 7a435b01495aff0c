package controllers

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

func TestCohortCycleDeactivatesItsQueues(t *testing.T) {
	create(t, &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "cycle-flavor"}})
	left := &kueue.Cohort{ObjectMeta: metav1.ObjectMeta{Name: "cycle-left"}, Spec: kueue.CohortSpec{ParentName: "cycle-right"}}
	right := &kueue.Cohort{ObjectMeta: metav1.ObjectMeta{Name: "cycle-right"}}
	create(t, left)
	create(t, right)
	cqLeft := clusterQueue("cq-cycle-left", "cycle-left", "cycle-flavor")
	cqRight := clusterQueue("cq-cycle-right", "cycle-right", "cycle-flavor")
	create(t, cqLeft)
	create(t, cqRight)
	for _, cq := range []*kueue.ClusterQueue{cqLeft, cqRight} {
		waitForActive(t, cq, func() []metav1.Condition { return cq.Status.Conditions }, metav1.ConditionTrue, kueue.ReasonReady)
	}

	// right -> left closes the loop left -> right -> left.
	update(t, right, func() { right.Spec.ParentName = "cycle-left" })
	for _, cq := range []*kueue.ClusterQueue{cqLeft, cqRight} {
		waitForActive(t, cq, func() []metav1.Condition { return cq.Status.Conditions }, metav1.ConditionFalse, kueue.ReasonCohortCycle,
			"cycle-left -> cycle-right", "cycle-right -> cycle-left")
	}

	// Breaking the cycle reactivates both.
	update(t, right, func() { right.Spec.ParentName = "" })
	for _, cq := range []*kueue.ClusterQueue{cqLeft, cqRight} {
		waitForActive(t, cq, func() []metav1.Condition { return cq.Status.Conditions }, metav1.ConditionTrue, kueue.ReasonReady)
	}
}

func TestLocalQueueFollowsItsClusterQueue(t *testing.T) {
	create(t, &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "lq-flavor"}})
	lq := &kueue.LocalQueue{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "team-queue"},
		Spec:       kueue.LocalQueueSpec{ClusterQueue: "cq-for-lq"},
	}
	create(t, lq)
	conditions := func() []metav1.Condition { return lq.Status.Conditions }
	waitForActive(t, lq, conditions, metav1.ConditionFalse, kueue.ReasonClusterQueueDoesNotExist)

	cq := clusterQueue("cq-for-lq", "", "lq-flavor")
	hold := kueue.StopPolicyHold
	cq.Spec.StopPolicy = &hold
	create(t, cq)
	waitForActive(t, lq, conditions, metav1.ConditionFalse, kueue.ReasonClusterQueueIsInactive, "cq-for-lq", kueue.ReasonStopped)

	update(t, cq, func() { cq.Spec.StopPolicy = ptr.To(kueue.StopPolicyNone) })
	waitForActive(t, lq, conditions, metav1.ConditionTrue, kueue.ReasonReady)
}
