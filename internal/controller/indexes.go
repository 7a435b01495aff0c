package controller

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/workload"
)

// Field indexes on the manager's cache, so that "who references X" is a
// lookup rather than a list of everything.
const (
	indexClusterQueueFlavors = "spec.resourceGroups.flavors.name"
	indexClusterQueueChecks  = "spec.admissionChecksStrategy.admissionChecks.name"
	indexClusterQueueCohort  = "spec.cohortName"
	indexLocalQueueCQ        = "spec.clusterQueue"
	indexWorkloadReservedIn  = "status.admission.clusterQueue"
	indexWorkloadQueueName   = "spec.queueName"
)

// SetupIndexes registers the field indexes the reconcilers use.
func SetupIndexes(ctx context.Context, indexer client.FieldIndexer) error {
	indexes := []struct {
		obj     client.Object
		field   string
		extract client.IndexerFunc
	}{
		{&kueue.ClusterQueue{}, indexClusterQueueFlavors, func(o client.Object) []string {
			return flavorNames(o.(*kueue.ClusterQueue).Spec.ResourceGroups)
		}},
		{&kueue.ClusterQueue{}, indexClusterQueueChecks, func(o client.Object) []string {
			return admissionCheckNames(o.(*kueue.ClusterQueue))
		}},
		{&kueue.ClusterQueue{}, indexClusterQueueCohort, func(o client.Object) []string {
			if c := o.(*kueue.ClusterQueue).Spec.CohortName; c != "" {
				return []string{string(c)}
			}
			return nil
		}},
		{&kueue.LocalQueue{}, indexLocalQueueCQ, func(o client.Object) []string {
			return []string{string(o.(*kueue.LocalQueue).Spec.ClusterQueue)}
		}},
		{&kueue.Workload{}, indexWorkloadQueueName, func(o client.Object) []string {
			return []string{string(o.(*kueue.Workload).Spec.QueueName)}
		}},
		{&kueue.Workload{}, indexWorkloadReservedIn, func(o client.Object) []string {
			// Only workloads that hold quota: a finished one keeps its
			// admission in status, and must not keep a deleted
			// ClusterQueue from going.
			wl := o.(*kueue.Workload)
			if wl.Status.Admission != nil && !workload.IsFinished(wl) {
				return []string{string(wl.Status.Admission.ClusterQueue)}
			}
			return nil
		}},
	}
	for _, ix := range indexes {
		if err := indexer.IndexField(ctx, ix.obj, ix.field, ix.extract); err != nil {
			return fmt.Errorf("indexing %T by %s: %w", ix.obj, ix.field, err)
		}
	}
	return nil
}

func flavorNames(groups []kueue.ResourceGroup) []string {
	var names []string
	for _, rg := range groups {
		for _, f := range rg.Flavors {
			names = append(names, string(f.Name))
		}
	}
	return names
}

func admissionCheckNames(cq *kueue.ClusterQueue) []string {
	if cq.Spec.AdmissionChecksStrategy == nil {
		return nil
	}
	names := make([]string, 0, len(cq.Spec.AdmissionChecksStrategy.AdmissionChecks))
	for _, ac := range cq.Spec.AdmissionChecksStrategy.AdmissionChecks {
		names = append(names, ac.Name)
	}
	return names
}
