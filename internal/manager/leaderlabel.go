package manager

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// LeaderLabel marks the Pod of the replica that leads: only the leader
// knows the queues (its reconcilers feed them), so the visibility Service
// selects that Pod.
const LeaderLabel = "sluice.x-k8s.io/leader"

// leaderLabel keeps LeaderLabel on this replica's Pod while it leads.
type leaderLabel struct {
	client client.Client
	pod    types.NamespacedName
}

// clear takes the label off: a replica that starts (a new Pod, or a
// restarted container of a Pod that led) does not lead yet.
func (l *leaderLabel) clear(ctx context.Context) error {
	return l.set(ctx, nil)
}

// set writes the label's value (nil removes it). A Pod that is gone has
// nothing to route to.
func (l *leaderLabel) set(ctx context.Context, value *string) error {
	patch := map[string]any{"metadata": map[string]any{"labels": map[string]any{LeaderLabel: value}}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: l.pod.Namespace, Name: l.pod.Name}}
	data, err := jsonMarshal(patch)
	if err != nil {
		return err
	}
	if err := l.client.Patch(ctx, pod, client.RawPatch(types.MergePatchType, data)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("labelling Pod %s (%s): %w", l.pod, LeaderLabel, err)
	}
	return nil
}

// Start runs once this replica is elected: it labels the Pod and, when
// the manager stops (and so gives up the lease), takes the label off.
func (l *leaderLabel) Start(ctx context.Context) error {
	value := "true"
	if err := l.set(ctx, &value); err != nil {
		return err
	}
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := l.clear(stopCtx); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "taking the leader label off this replica's Pod")
	}
	return nil
}

// NeedLeaderElection: only the leader labels its Pod.
func (*leaderLabel) NeedLeaderElection() bool { return true }

func jsonMarshal(v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding a patch: %w", err)
	}
	return data, nil
}
