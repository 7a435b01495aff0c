package admission

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// An idle new queue's status stores its counts as 0 on the API server, as
// Kueue's does: kubectl's columns and users' tools read them there, and a
// merge patch of what changed would leave them out.
func TestIdleQueuesStoreZeroCounts(t *testing.T) {
	ns, rf, cq := namespace(t, nil), cluster.Unique("rf"), cluster.Unique("cq")
	cluster.MustCreate(t, flavor(rf, nil), clusterQueue(cq, "", fq{flavor: rf, nominal: "4"}), localQueue(ns, "lq", cq))
	for _, q := range []struct {
		kind string
		key  client.ObjectKey
	}{{"ClusterQueue", client.ObjectKey{Name: cq}}, {"LocalQueue", client.ObjectKey{Namespace: ns, Name: "lq"}}} {
		stored := &unstructured.Unstructured{}
		stored.SetGroupVersionKind(kueue.GroupVersion.WithKind(q.kind))
		framework.Eventually(t, q.kind+" status to store its counts", func(ctx context.Context) (bool, error) {
			if err := cluster.Client.Get(ctx, q.key, stored); err != nil {
				return false, err
			}
			for _, field := range []string{"pendingWorkloads", "reservingWorkloads", "admittedWorkloads"} {
				if v, found, err := unstructured.NestedInt64(stored.Object, "status", field); err != nil || !found || v != 0 {
					return false, nil
				}
			}
			return true, nil
		})
	}
}
