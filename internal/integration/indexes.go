package integration

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// IndexWorkloadOwner indexes Workloads by "<group>/<Kind>/<name>" of their
// controller owner, so a job finds its Workloads (and a deleted job its
// orphans) without listing everything.
const IndexWorkloadOwner = "metadata.ownerReferences.controller"

// SetupIndexes registers the framework's field index.
func SetupIndexes(ctx context.Context, indexer client.FieldIndexer) error {
	err := indexer.IndexField(ctx, &kueue.Workload{}, IndexWorkloadOwner, func(o client.Object) []string {
		owner := metav1.GetControllerOf(o)
		if owner == nil {
			return nil
		}
		gv, err := schema.ParseGroupVersion(owner.APIVersion)
		if err != nil {
			return nil
		}
		return []string{gv.Group + "/" + owner.Kind + "/" + owner.Name}
	})
	if err != nil {
		return fmt.Errorf("indexing Workloads by owner: %w", err)
	}
	return nil
}

func ownerKey(kind Kind, name string) string {
	return kind.GVK.Group + "/" + kind.GVK.Kind + "/" + name
}
