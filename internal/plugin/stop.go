package plugin

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// newStopCommand is stop (or resume, !stop): a ClusterQueue's or
// LocalQueue's stopPolicy, a Workload's spec.active.
func newStopCommand(s *session, stop bool) *cobra.Command {
	var drain bool
	use, short := "resume", "Resume a ClusterQueue, LocalQueue or Workload"
	if stop {
		use, short = "stop", "Stop a ClusterQueue or LocalQueue from admitting (--drain: evict what it runs), or deactivate a Workload"
	}
	cmd := &cobra.Command{
		Use:       use + " clusterqueue|localqueue|workload NAME",
		Short:     short,
		Args:      cobra.ExactArgs(2),
		ValidArgs: []string{"clusterqueue", "localqueue", "workload"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := s.connect(); err != nil {
				return err
			}
			return setStopped(cmd.Context(), s, args[0], args[1], stop, drain)
		},
	}
	if stop {
		cmd.Flags().BoolVar(&drain, "drain", false, "also evict the admitted workloads (stopPolicy HoldAndDrain); default Hold")
	}
	return cmd
}

func setStopped(ctx context.Context, s *session, kind, name string, stop, drain bool) error {
	policy := kueue.StopPolicyNone
	if stop {
		policy = kueue.StopPolicyHold
		if drain {
			policy = kueue.StopPolicyHoldAndDrain
		}
	}
	var obj client.Object
	var mutate func()
	switch kind {
	case "clusterqueue", "cq":
		cq := &kueue.ClusterQueue{}
		obj, mutate = cq, func() { cq.Spec.StopPolicy = ptr.To(policy) }
		if err := s.client.Get(ctx, client.ObjectKey{Name: name}, cq); err != nil {
			return fmt.Errorf("ClusterQueue %s: %w", name, err)
		}
	case "localqueue", "lq", "workload", "wl":
		ns, err := s.namespace()
		if err != nil {
			return err
		}
		if kind == "localqueue" || kind == "lq" {
			lq := &kueue.LocalQueue{}
			obj, mutate = lq, func() { lq.Spec.StopPolicy = ptr.To(policy) }
		} else {
			wl := &kueue.Workload{}
			obj, mutate = wl, func() { wl.Spec.Active = ptr.To(!stop) }
		}
		if err := s.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
			return fmt.Errorf("%s %s/%s: %w", kind, ns, name, err)
		}
	default:
		return fmt.Errorf("%q: want clusterqueue, localqueue or workload", kind)
	}
	// A merge patch of the one field, without a resourceVersion: the
	// manager writes these objects' status all the time, and the field
	// set does not depend on anything else read.
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	mutate()
	if err := s.client.Patch(ctx, obj, patch); err != nil {
		return fmt.Errorf("%s %s: %w", kind, name, err)
	}
	verb := "resumed"
	if stop {
		verb = "stopped (" + string(policy) + ")"
		if kind == "workload" || kind == "wl" {
			verb = "deactivated"
		}
	}
	fmt.Fprintf(s.out, "%s %s %s\n", kind, name, verb)
	return nil
}
