package plugin

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

func newWhyCommand(s *session) *cobra.Command {
	return &cobra.Command{
		Use:   "why WORKLOAD",
		Short: "Say why a workload waits (or was evicted), with its queue's quota, who could lend, and what runs in its place",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := s.connect(); err != nil {
				return err
			}
			ns, err := s.namespace()
			if err != nil {
				return err
			}
			return why(cmd.Context(), s, ns, args[0])
		},
	}
}

func why(ctx context.Context, s *session, namespace, name string) error {
	c, out := s.client, s.out
	wl := &kueue.Workload{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, wl); err != nil {
		return fmt.Errorf("workload %s/%s: %w", namespace, name, err)
	}
	status, message := workloadStatus(wl)
	fmt.Fprintf(out, "Workload %s/%s: %s\n", namespace, name, status)
	if message != "" {
		fmt.Fprintf(out, "Why: %s\n", message)
	}
	for _, t := range []string{kueue.WorkloadPreempted, kueue.WorkloadEvicted} {
		if cond := meta.FindStatusCondition(wl.Status.Conditions, t); cond != nil && cond.Status == "True" && cond.Message != message {
			fmt.Fprintf(out, "%s (%s): %s\n", t, cond.Reason, cond.Message)
		}
	}
	lq := &kueue.LocalQueue{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: string(wl.Spec.QueueName)}, lq); err != nil {
		fmt.Fprintf(out, "LocalQueue %q: %v\n", wl.Spec.QueueName, err)
		return nil
	}
	cq := &kueue.ClusterQueue{}
	if err := c.Get(ctx, client.ObjectKey{Name: string(lq.Spec.ClusterQueue)}, cq); err != nil {
		fmt.Fprintf(out, "ClusterQueue %q: %v\n", lq.Spec.ClusterQueue, err)
		return nil
	}
	cohort := ""
	if cq.Spec.CohortName != "" {
		cohort = fmt.Sprintf(" (cohort %s)", cq.Spec.CohortName)
	}
	fmt.Fprintf(out, "Queue: LocalQueue %s -> ClusterQueue %s%s: %d pending, %d admitted\n", lq.Name, cq.Name, cohort,
		cq.Status.PendingWorkloads, cq.Status.AdmittedWorkloads)
	if status == "Pending" {
		if p, ok := s.positions(ctx, map[string]bool{namespace + "/" + lq.Name: true})[namespace+"/"+name]; ok {
			fmt.Fprintf(out, "Position: %d in LocalQueue %s, %d in ClusterQueue %s (from 0: the next to be tried)\n",
				p.PositionInLocalQueue, lq.Name, p.PositionInClusterQueue, cq.Name)
		}
	}
	fmt.Fprintln(out)
	quotaTable(out, cq)
	if cq.Spec.CohortName != "" {
		if err := lenders(ctx, c, out, cq); err != nil {
			return err
		}
	}
	if status == "Pending" {
		return running(ctx, c, out, cq.Name)
	}
	return nil
}

// quotaTable prints the ClusterQueue's quota against what is in use.
func quotaTable(out io.Writer, cq *kueue.ClusterQueue) {
	used := usage(cq)
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "FLAVOR\tRESOURCE\tNOMINAL\tBORROWING LIMIT\tUSED\tBORROWED")
	for _, rg := range cq.Spec.ResourceGroups {
		for _, f := range rg.Flavors {
			for _, r := range f.Resources {
				limit := "none"
				if r.BorrowingLimit != nil {
					limit = r.BorrowingLimit.String()
				}
				u := used[string(f.Name)+"/"+string(r.Name)]
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", f.Name, r.Name, r.NominalQuota.String(), limit, u.Total.String(), u.Borrowed.String())
			}
		}
	}
	_ = w.Flush()
}

func usage(cq *kueue.ClusterQueue) map[string]kueue.ResourceUsage {
	out := map[string]kueue.ResourceUsage{}
	for _, fu := range cq.Status.FlavorsReservation {
		for _, r := range fu.Resources {
			out[string(fu.Name)+"/"+r.Name] = r
		}
	}
	return out
}

// lenders prints the ClusterQueues of the cohort with quota they do not
// use: what the workload could borrow.
func lenders(ctx context.Context, c client.Client, out io.Writer, cq *kueue.ClusterQueue) error {
	all := &kueue.ClusterQueueList{}
	if err := c.List(ctx, all); err != nil {
		return fmt.Errorf("listing ClusterQueues: %w", err)
	}
	var lines []string
	for _, other := range all.Items {
		if other.Name == cq.Name || other.Spec.CohortName != cq.Spec.CohortName {
			continue
		}
		used := usage(&other)
		for _, rg := range other.Spec.ResourceGroups {
			for _, f := range rg.Flavors {
				for _, r := range f.Resources {
					idle := r.NominalQuota.DeepCopy()
					u := used[string(f.Name)+"/"+string(r.Name)].Total
					idle.Sub(u)
					if r.LendingLimit != nil && r.LendingLimit.Cmp(idle) < 0 {
						idle = r.LendingLimit.DeepCopy()
					}
					if idle.Sign() > 0 {
						lines = append(lines, fmt.Sprintf("  %s: %s %s of %s unused", other.Name, idle.String(), r.Name, f.Name))
					}
				}
			}
		}
	}
	fmt.Fprintf(out, "\nCould lend in cohort %s:\n", cq.Spec.CohortName)
	if len(lines) == 0 {
		lines = []string{"  none: every other ClusterQueue uses its quota"}
	}
	for _, l := range lines {
		fmt.Fprintln(out, l)
	}
	return nil
}

// running prints what holds the ClusterQueue's quota, lowest priority
// first: what would have to finish, or be preempted, to make room.
func running(ctx context.Context, c client.Client, out io.Writer, clusterQueue string) error {
	wls := &kueue.WorkloadList{}
	if err := c.List(ctx, wls); err != nil {
		return fmt.Errorf("listing Workloads: %w", err)
	}
	var holding []kueue.Workload
	for _, wl := range wls.Items {
		if clusterQueueOf(&wl) == clusterQueue && !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
			holding = append(holding, wl)
		}
	}
	slices.SortFunc(holding, func(a, b kueue.Workload) int {
		pa, pb := priorityOf(&a), priorityOf(&b)
		if pa != pb {
			return int(pa - pb)
		}
		return b.CreationTimestamp.Compare(a.CreationTimestamp.Time)
	})
	fmt.Fprintf(out, "\nHolding ClusterQueue %s's quota (lowest priority first):\n", clusterQueue)
	if len(holding) == 0 {
		fmt.Fprintln(out, "  nothing")
	}
	for _, wl := range holding {
		fmt.Fprintf(out, "  %s/%s  priority %d  %s\n", wl.Namespace, wl.Name, priorityOf(&wl), requests(&wl))
	}
	return nil
}

func priorityOf(wl *kueue.Workload) int32 {
	if wl.Spec.Priority != nil {
		return *wl.Spec.Priority
	}
	return 0
}

// requests is what the admission gave the workload, per resource.
func requests(wl *kueue.Workload) string {
	if wl.Status.Admission == nil {
		return ""
	}
	total := map[string]resource.Quantity{}
	var names []string
	for _, psa := range wl.Status.Admission.PodSetAssignments {
		for name, q := range psa.ResourceUsage {
			t, seen := total[string(name)]
			if !seen {
				names = append(names, string(name))
			}
			t.Add(q)
			total[string(name)] = t
		}
	}
	slices.Sort(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		q := total[n]
		parts = append(parts, n+"="+q.String())
	}
	return strings.Join(parts, " ")
}
