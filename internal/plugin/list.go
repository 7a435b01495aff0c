package plugin

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/apis/scheme"
	visibilityv1beta2 "github.com/sluicehq/sluice/apis/visibility/v1beta2"
)

// listOptions are list's flags.
type listOptions struct {
	output        string
	allNamespaces bool
	clusterQueue  string
	localQueue    string
}

func newListCommand(s *session) *cobra.Command {
	o := &listOptions{}
	cmd := &cobra.Command{
		Use:       "list clusterqueues|localqueues|workloads",
		Short:     "List ClusterQueues, LocalQueues or Workloads with their counts and why they wait",
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"clusterqueues", "localqueues", "workloads"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := s.connect(); err != nil {
				return err
			}
			return list(cmd.Context(), s, o, args[0])
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&o.output, "output", "o", "", "output format: wide, json or yaml")
	fs.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "LocalQueues and Workloads of every namespace")
	fs.StringVar(&o.clusterQueue, "clusterqueue", "", "only the Workloads and LocalQueues of this ClusterQueue")
	fs.StringVar(&o.localQueue, "localqueue", "", "only the Workloads of this LocalQueue")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"wide", "json", "yaml"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func list(ctx context.Context, s *session, o *listOptions, what string) error {
	if !slices.Contains([]string{"", "wide", "json", "yaml"}, o.output) {
		return fmt.Errorf("--output %q: want wide, json or yaml", o.output)
	}
	var opts []client.ListOption
	if !o.allNamespaces && what != "clusterqueues" && what != "cq" {
		ns, err := s.namespace()
		if err != nil {
			return err
		}
		opts = append(opts, client.InNamespace(ns))
	}
	switch what {
	case "clusterqueues", "clusterqueue", "cq":
		l := &kueue.ClusterQueueList{}
		if err := s.client.List(ctx, l); err != nil {
			return fmt.Errorf("listing ClusterQueues: %w", err)
		}
		return print(s.out, o.output, l, clusterQueueTable(l, o.output == "wide"))
	case "localqueues", "localqueue", "lq":
		l := &kueue.LocalQueueList{}
		if err := s.client.List(ctx, l, opts...); err != nil {
			return fmt.Errorf("listing LocalQueues: %w", err)
		}
		l.Items = slices.DeleteFunc(l.Items, func(lq kueue.LocalQueue) bool {
			return o.clusterQueue != "" && string(lq.Spec.ClusterQueue) != o.clusterQueue
		})
		return print(s.out, o.output, l, localQueueTable(l))
	case "workloads", "workload", "wl":
		l := &kueue.WorkloadList{}
		if err := s.client.List(ctx, l, opts...); err != nil {
			return fmt.Errorf("listing Workloads: %w", err)
		}
		l.Items = slices.DeleteFunc(l.Items, func(wl kueue.Workload) bool {
			return (o.localQueue != "" && string(wl.Spec.QueueName) != o.localQueue) ||
				(o.clusterQueue != "" && clusterQueueOf(&wl) != o.clusterQueue)
		})
		var positions map[string]visibilityv1beta2.PendingWorkload
		if o.output == "" || o.output == "wide" {
			positions = s.positions(ctx, pendingLocalQueues(l))
		}
		return print(s.out, o.output, l, workloadTable(l, positions, o.output == "wide", time.Now()))
	}
	return fmt.Errorf("list %q: want clusterqueues, localqueues or workloads", what)
}

// print writes obj as JSON or YAML, or the table's rows.
func print(out io.Writer, format string, obj runtime.Object, rows [][]string) error {
	switch format {
	case "json", "yaml":
		var p printers.ResourcePrinter = &printers.JSONPrinter{}
		if format == "yaml" {
			p = &printers.YAMLPrinter{}
		}
		return printers.NewTypeSetter(scheme.Scheme).ToPrinter(p).PrintObj(obj, out)
	}
	w := tabwriter.NewWriter(out, 0, 4, 3, ' ', 0)
	for _, row := range rows {
		fmt.Fprintln(w, strings.Join(row, "\t"))
	}
	return w.Flush()
}

func clusterQueueTable(l *kueue.ClusterQueueList, wide bool) [][]string {
	rows := [][]string{{"NAME", "COHORT", "PENDING", "RESERVING", "ADMITTED", "ACTIVE"}}
	if wide {
		rows[0] = append(rows[0], "STRATEGY", "STOP POLICY", "WHY")
	}
	for _, cq := range l.Items {
		row := []string{cq.Name, string(cq.Spec.CohortName), fmt.Sprint(cq.Status.PendingWorkloads),
			fmt.Sprint(cq.Status.ReservingWorkloads), fmt.Sprint(cq.Status.AdmittedWorkloads), conditionStatus(cq.Status.Conditions, kueue.ConditionActive)}
		if wide {
			row = append(row, string(cq.Spec.QueueingStrategy), stopPolicy(cq.Spec.StopPolicy), conditionMessage(cq.Status.Conditions, kueue.ConditionActive))
		}
		rows = append(rows, row)
	}
	return rows
}

func localQueueTable(l *kueue.LocalQueueList) [][]string {
	rows := [][]string{{"NAMESPACE", "NAME", "CLUSTERQUEUE", "PENDING", "RESERVING", "ADMITTED", "ACTIVE"}}
	for _, lq := range l.Items {
		rows = append(rows, []string{lq.Namespace, lq.Name, string(lq.Spec.ClusterQueue), fmt.Sprint(lq.Status.PendingWorkloads),
			fmt.Sprint(lq.Status.ReservingWorkloads), fmt.Sprint(lq.Status.AdmittedWorkloads), conditionStatus(lq.Status.Conditions, kueue.ConditionActive)})
	}
	return rows
}

// pendingLocalQueues are the LocalQueues (namespace/name) of the pending
// workloads of l.
func pendingLocalQueues(l *kueue.WorkloadList) map[string]bool {
	out := map[string]bool{}
	for i := range l.Items {
		if status, _ := workloadStatus(&l.Items[i]); status == "Pending" {
			out[l.Items[i].Namespace+"/"+string(l.Items[i].Spec.QueueName)] = true
		}
	}
	return out
}

// workloadTable has a row per workload; a pending one with its position
// in its LocalQueue (as kubectl kueue prints it) and, wide, in its
// ClusterQueue, from the visibility API.
func workloadTable(l *kueue.WorkloadList, positions map[string]visibilityv1beta2.PendingWorkload, wide bool, now time.Time) [][]string {
	rows := [][]string{{"NAMESPACE", "NAME", "QUEUE", "CLUSTERQUEUE", "STATUS", "POSITION", "PRIORITY", "AGE", "WHY"}}
	if wide {
		rows[0] = slices.Insert(rows[0], 6, "CQ POSITION")
	}
	for _, wl := range l.Items {
		status, why := workloadStatus(&wl)
		if !wide && len(why) > 80 {
			why = why[:77] + "..."
		}
		priority := ""
		if wl.Spec.Priority != nil {
			priority = fmt.Sprint(*wl.Spec.Priority)
		}
		position, cqPosition := "", ""
		if p, ok := positions[wl.Namespace+"/"+wl.Name]; ok && status == "Pending" {
			position, cqPosition = fmt.Sprint(p.PositionInLocalQueue), fmt.Sprint(p.PositionInClusterQueue)
		}
		row := []string{wl.Namespace, wl.Name, string(wl.Spec.QueueName), clusterQueueOf(&wl), status, position}
		if wide {
			row = append(row, cqPosition)
		}
		rows = append(rows, append(row, priority, duration.HumanDuration(now.Sub(wl.CreationTimestamp.Time)), why))
	}
	return rows
}

// workloadStatus is a workload's state in a word, and what says why.
func workloadStatus(wl *kueue.Workload) (string, string) {
	conds := wl.Status.Conditions
	switch {
	case meta.IsStatusConditionTrue(conds, kueue.WorkloadFinished):
		return "Finished", conditionMessage(conds, kueue.WorkloadFinished)
	case meta.IsStatusConditionTrue(conds, kueue.WorkloadEvicted):
		return "Evicted", conditionMessage(conds, kueue.WorkloadEvicted)
	case meta.IsStatusConditionTrue(conds, kueue.WorkloadAdmitted):
		return "Admitted", ""
	case meta.IsStatusConditionTrue(conds, kueue.WorkloadQuotaReserved):
		return "QuotaReserved", conditionMessage(conds, kueue.WorkloadAdmitted)
	case wl.Spec.Active != nil && !*wl.Spec.Active:
		return "Inactive", conditionMessage(conds, kueue.WorkloadQuotaReserved)
	}
	return "Pending", conditionMessage(conds, kueue.WorkloadQuotaReserved)
}

func clusterQueueOf(wl *kueue.Workload) string {
	if wl.Status.Admission != nil {
		return string(wl.Status.Admission.ClusterQueue)
	}
	return ""
}

func conditionStatus(conds []metav1.Condition, t string) string {
	if c := meta.FindStatusCondition(conds, t); c != nil {
		return string(c.Status)
	}
	return "Unknown"
}

func conditionMessage(conds []metav1.Condition, t string) string {
	if c := meta.FindStatusCondition(conds, t); c != nil {
		return c.Message
	}
	return ""
}

func stopPolicy(p *kueue.StopPolicy) string {
	if p == nil {
		return string(kueue.StopPolicyNone)
	}
	return string(*p)
}
