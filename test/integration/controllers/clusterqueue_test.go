package controllers

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/test/integration/framework"
)

func TestClusterQueueWaitsForItsFlavor(t *testing.T) {
	cq := clusterQueue("cq-missing-flavor", "", "late-flavor")
	create(t, cq)
	waitForActive(t, cq, func() []metav1.Condition { return cq.Status.Conditions }, metav1.ConditionFalse, kueue.ReasonFlavorNotFound, "late-flavor")

	create(t, &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "late-flavor"}})
	waitForActive(t, cq, func() []metav1.Condition { return cq.Status.Conditions }, metav1.ConditionTrue, kueue.ReasonReady)
}

func TestFlavorDeletionIsHeldWhileInUse(t *testing.T) {
	ctx := context.Background()
	inUse := &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "held-flavor"}}
	unused := &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "free-flavor"}}
	create(t, inUse)
	create(t, unused)
	for _, rf := range []*kueue.ResourceFlavor{inUse, unused} {
		framework.Eventually(t, rf.Name+" to get its finalizer", func(ctx context.Context) (bool, error) {
			err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(rf), rf)
			return controllerutil.ContainsFinalizer(rf, kueue.ResourceInUseFinalizerName), err
		})
	}
	cq := clusterQueue("cq-holding-flavor", "", "held-flavor")
	create(t, cq)
	waitForActive(t, cq, func() []metav1.Condition { return cq.Status.Conditions }, metav1.ConditionTrue, kueue.ReasonReady)

	for _, rf := range []*kueue.ResourceFlavor{inUse, unused} {
		if err := cluster.Client.Delete(ctx, rf); err != nil {
			t.Fatal(err)
		}
	}
	// Once the reconciler has released the unused flavor, it has seen both
	// deletions: the flavor in use must still be there, held.
	framework.Eventually(t, "the unused flavor to be deleted", func(ctx context.Context) (bool, error) {
		err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(unused), unused)
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(inUse), inUse); err != nil {
		t.Fatalf("the flavor in use disappeared: %v", err)
	}
	if inUse.DeletionTimestamp.IsZero() || !controllerutil.ContainsFinalizer(inUse, kueue.ResourceInUseFinalizerName) {
		t.Fatalf("the flavor in use is not held for deletion: deletionTimestamp=%v finalizers=%v", inUse.DeletionTimestamp, inUse.Finalizers)
	}

	// The queue lets go: the deletion completes.
	update(t, cq, func() { cq.Spec.ResourceGroups = nil })
	framework.Eventually(t, "the flavor to be deleted once unused", func(ctx context.Context) (bool, error) {
		err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(inUse), inUse)
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

func TestStoppedClusterQueueIsInactive(t *testing.T) {
	create(t, &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "stop-flavor"}})
	cq := clusterQueue("cq-stopped", "", "stop-flavor")
	hold := kueue.StopPolicyHold
	cq.Spec.StopPolicy = &hold
	create(t, cq)
	waitForActive(t, cq, func() []metav1.Condition { return cq.Status.Conditions }, metav1.ConditionFalse, kueue.ReasonStopped)

	update(t, cq, func() { cq.Spec.StopPolicy = ptr.To(kueue.StopPolicyNone) })
	waitForActive(t, cq, func() []metav1.Condition { return cq.Status.Conditions }, metav1.ConditionTrue, kueue.ReasonReady)
}

func TestAdmissionCheckReferences(t *testing.T) {
	ctx := context.Background()
	create(t, &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "ac-flavor"}})
	cq := clusterQueue("cq-with-check", "", "ac-flavor")
	cq.Spec.AdmissionChecksStrategy = &kueue.AdmissionChecksStrategy{
		AdmissionChecks: []kueue.AdmissionCheckStrategyRule{{Name: "prov-check"}},
	}
	create(t, cq)
	waitForActive(t, cq, func() []metav1.Condition { return cq.Status.Conditions }, metav1.ConditionFalse, kueue.ReasonAdmissionCheckNotFound, "prov-check")

	ac := &kueue.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: "prov-check"}, Spec: kueue.AdmissionCheckSpec{ControllerName: "example.com/prov"}}
	create(t, ac)
	waitForActive(t, cq, func() []metav1.Condition { return cq.Status.Conditions }, metav1.ConditionFalse, kueue.ReasonAdmissionCheckInactive)

	// The check's own controller marks it active.
	meta.SetStatusCondition(&ac.Status.Conditions, metav1.Condition{Type: kueue.ConditionActive, Status: metav1.ConditionTrue, Reason: "Active", Message: "ready"})
	if err := cluster.Client.Status().Update(ctx, ac); err != nil {
		t.Fatal(err)
	}
	waitForActive(t, cq, func() []metav1.Condition { return cq.Status.Conditions }, metav1.ConditionTrue, kueue.ReasonReady)
}
