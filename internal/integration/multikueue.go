package integration

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// QueueDispatches tells whether a LocalQueue leads to a ClusterQueue with
// a MultiKueue admission check: its jobs run in worker clusters. A queue
// or ClusterQueue that doesn't exist (yet) dispatches nothing.
func QueueDispatches(ctx context.Context, reader client.Reader, namespace, queue string) (bool, error) {
	lq := &kueue.LocalQueue{}
	if err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: queue}, lq); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	cq := &kueue.ClusterQueue{}
	if err := reader.Get(ctx, client.ObjectKey{Name: string(lq.Spec.ClusterQueue)}, cq); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	if cq.Spec.AdmissionChecksStrategy == nil {
		return false, nil
	}
	for _, rule := range cq.Spec.AdmissionChecksStrategy.AdmissionChecks {
		ac := &kueue.AdmissionCheck{}
		if err := reader.Get(ctx, client.ObjectKey{Name: string(rule.Name)}, ac); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return false, fmt.Errorf("reading AdmissionCheck %s: %w", rule.Name, err)
		}
		if ac.Spec.ControllerName == kueue.MultiKueueControllerName {
			return true, nil
		}
	}
	return false, nil
}
