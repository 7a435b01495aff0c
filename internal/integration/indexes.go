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

// IndexPrebuiltWorkload indexes jobs by the prebuilt Workload they name,
// so that a Workload created (or seen) after its job starts it.
const IndexPrebuiltWorkload = "prebuiltWorkloadName"

// SetupIndexes registers the framework's field indexes, for the kinds given.
func SetupIndexes(ctx context.Context, indexer client.FieldIndexer, kinds []Kind) error {
	for _, k := range kinds {
		err := indexer.IndexField(ctx, k.NewObject(), IndexPrebuiltWorkload, func(o client.Object) []string {
			if name := prebuiltName(o); name != "" {
				return []string{name}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("indexing %s by prebuilt Workload: %w", k.GVK.Kind, err)
		}
	}
	if err := indexer.IndexField(ctx, &kueue.Workload{}, IndexWorkloadOwner, WorkloadOwnerKeys); err != nil {
		return fmt.Errorf("indexing Workloads by owner: %w", err)
	}
	return nil
}

// WorkloadOwnerKeys are the IndexWorkloadOwner keys of a Workload.
func WorkloadOwnerKeys(o client.Object) []string {
	owner := metav1.GetControllerOf(o)
	if owner == nil {
		return nil
	}
	gv, err := schema.ParseGroupVersion(owner.APIVersion)
	if err != nil {
		return nil
	}
	return []string{gv.Group + "/" + owner.Kind + "/" + owner.Name}
}

func ownerKey(kind Kind, name string) string {
	return kind.GVK.Group + "/" + kind.GVK.Kind + "/" + name
}
