package integration

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PodsGoneByLabel tells whether no pod labelled key=value in the
// namespace may still run: none left, or all of them ended. It is a
// kind's PodsGone for controllers that label their pods with the job's
// UID. reader must read from the API server (the manager caches only the
// Pods it queues).
func PodsGoneByLabel(ctx context.Context, reader client.Reader, namespace, key, value string) (bool, error) {
	pods := &corev1.PodList{}
	if err := reader.List(ctx, pods, client.InNamespace(namespace), client.MatchingLabels{key: value}); err != nil {
		return false, fmt.Errorf("listing the pods labelled %s=%s: %w", key, value, err)
	}
	for i := range pods.Items {
		if phase := pods.Items[i].Status.Phase; phase != corev1.PodSucceeded && phase != corev1.PodFailed {
			return false, nil
		}
	}
	return true, nil
}

// MessageOr is message, or fallback when it is empty.
func MessageOr(message, fallback string) string {
	if message != "" {
		return message
	}
	return fallback
}
