package controllers

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/test/integration/framework"
)

func clusterQueue(name, cohort string, flavors ...string) *kueue.ClusterQueue {
	cq := &kueue.ClusterQueue{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       kueue.ClusterQueueSpec{CohortName: kueue.CohortReference(cohort), NamespaceSelector: &metav1.LabelSelector{}},
	}
	if len(flavors) > 0 {
		rg := kueue.ResourceGroup{CoveredResources: []corev1.ResourceName{"cpu"}}
		for _, f := range flavors {
			rg.Flavors = append(rg.Flavors, kueue.FlavorQuotas{
				Name:      kueue.ResourceFlavorReference(f),
				Resources: []kueue.ResourceQuota{{Name: "cpu", NominalQuota: resource.MustParse("4")}},
			})
		}
		cq.Spec.ResourceGroups = []kueue.ResourceGroup{rg}
	}
	return cq
}

// create creates obj and deletes it when the test ends. Objects are deleted
// newest first, and the test ends only when all of them are gone (finalizers
// included), so tests don't leak into each other.
func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := cluster.Client.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
	created, ok := createdObjects[t]
	if !ok {
		t.Cleanup(func() {
			for _, o := range createdObjects[t] {
				framework.Eventually(t, fmt.Sprintf("%T %s to be gone", o, o.GetName()), func(ctx context.Context) (bool, error) {
					err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(o), o.DeepCopyObject().(client.Object))
					return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
				})
			}
			delete(createdObjects, t)
		})
	}
	createdObjects[t] = append(created, obj)
	t.Cleanup(func() {
		if err := cluster.Client.Delete(context.Background(), obj); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting %T %s: %v", obj, obj.GetName(), err)
		}
	})
}

// createdObjects is per test, and tests of this suite don't run in parallel.
var createdObjects = map[*testing.T][]client.Object{}

func update(t *testing.T, obj client.Object, mutate func()) {
	t.Helper()
	framework.Update(t, cluster.Client, obj, mutate)
}

// waitForActive polls until the object's Active condition has the wanted
// status and reason, and a message containing every one of messageParts.
func waitForActive(t *testing.T, obj client.Object, conditions func() []metav1.Condition, status metav1.ConditionStatus, reason string, messageParts ...string) metav1.Condition {
	t.Helper()
	var got metav1.Condition
	framework.Eventually(t, fmt.Sprintf("%s to be Active=%s/%s", obj.GetName(), status, reason), func(ctx context.Context) (bool, error) {
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(conditions(), kueue.ConditionActive)
		if c == nil {
			return false, fmt.Errorf("no Active condition yet")
		}
		got = *c
		if c.Status != status || c.Reason != reason {
			return false, fmt.Errorf("Active=%s/%s: %s", c.Status, c.Reason, c.Message)
		}
		for _, part := range messageParts {
			if !strings.Contains(c.Message, part) {
				return false, fmt.Errorf("message %q does not contain %q", c.Message, part)
			}
		}
		return true, nil
	})
	return got
}
