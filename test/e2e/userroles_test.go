package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// sluice dev installs what the release gives the people who use queues:
// a namespace's editor (the built-in edit role, into which the user roles
// aggregate) lists its namespace's LocalQueues and Workloads, and neither
// another namespace's nor the ClusterQueues.
func TestDevClusterGivesANamespaceEditorItsQueues(t *testing.T) {
	admin := sharedClient(t)
	const user, ns, other = "e2e-editor", "team-a", "team-b"
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"}}
	if err := admin.Create(t.Context(), binding); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Delete(context.Background(), binding) })
	editor, err := shared.clientAs(user)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, user+" to list the LocalQueues and Workloads of "+ns, func(ctx context.Context) (bool, error) {
		queues := &kueue.LocalQueueList{}
		if err := editor.List(ctx, queues, client.InNamespace(ns)); err != nil {
			return false, nil // the aggregation may not have run yet
		}
		if !slices.ContainsFunc(queues.Items, func(q kueue.LocalQueue) bool { return q.Name == "user-queue" }) {
			return false, fmt.Errorf("LocalQueues of %s: %d, none the sample's user-queue", ns, len(queues.Items))
		}
		return editor.List(ctx, &kueue.WorkloadList{}, client.InNamespace(ns)) == nil, nil
	})
	for what, err := range map[string]error{
		"listing ClusterQueues":                   editor.List(t.Context(), &kueue.ClusterQueueList{}),
		"listing the LocalQueues of " + other:     editor.List(t.Context(), &kueue.LocalQueueList{}, client.InNamespace(other)),
		"creating a LocalQueue (a batch admin's)": editor.Create(t.Context(), &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mine"}, Spec: kueue.LocalQueueSpec{ClusterQueue: "team-a"}}, client.DryRunAll),
	} {
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s as %s: %v, want forbidden", what, user, err)
		}
	}
}
