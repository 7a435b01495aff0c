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
	"k8s.io/apimachinery/pkg/api/resource"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// barWidth is how many characters a full usage bar takes.
const barWidth = 20

type topOptions struct {
	interval time.Duration
	once     bool
}

func newTopCommand(s *session) *cobra.Command {
	o := &topOptions{}
	cmd := &cobra.Command{
		Use:   "top",
		Short: "A live view of cohorts and ClusterQueues: each flavor's usage against its quota, as bars",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.interval <= 0 {
				return fmt.Errorf("--interval %s: want a positive duration", o.interval)
			}
			if err := s.connect(); err != nil {
				return err
			}
			return top(cmd.Context(), s, o)
		},
	}
	cmd.Flags().DurationVar(&o.interval, "interval", 2*time.Second, "how often the view is redrawn")
	cmd.Flags().BoolVar(&o.once, "once", false, "print the view once and exit")
	return cmd
}

// top draws the view, then redraws it every interval until interrupted.
func top(ctx context.Context, s *session, o *topOptions) error {
	ticker := time.NewTicker(o.interval)
	defer ticker.Stop()
	for {
		l := &kueue.ClusterQueueList{}
		if err := s.client.List(ctx, l); err != nil {
			return fmt.Errorf("listing ClusterQueues: %w", err)
		}
		if !o.once {
			// Home and clear: the view replaces the last one.
			fmt.Fprint(s.out, "\x1b[H\x1b[2J")
		}
		renderTop(s.out, l.Items, time.Now())
		if o.once {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// renderTop prints the ClusterQueues by cohort, each flavor and resource
// with a bar of what is reserved against the nominal quota.
func renderTop(out io.Writer, cqs []kueue.ClusterQueue, now time.Time) {
	byCohort := map[string][]kueue.ClusterQueue{}
	for _, cq := range cqs {
		byCohort[string(cq.Spec.CohortName)] = append(byCohort[string(cq.Spec.CohortName)], cq)
	}
	cohorts := make([]string, 0, len(byCohort))
	for c := range byCohort {
		cohorts = append(cohorts, c)
	}
	// Cohorts by name, the queues without one last.
	slices.SortFunc(cohorts, func(a, b string) int {
		switch {
		case a == "":
			return 1
		case b == "":
			return -1
		}
		return strings.Compare(a, b)
	})
	fmt.Fprintf(out, "sluice top  %s  (ClusterQueue status: updated by sluice every few seconds)\n", now.Format(time.TimeOnly))
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	for _, cohort := range cohorts {
		title := "COHORT " + cohort
		if cohort == "" {
			title = "NO COHORT"
		}
		fmt.Fprintf(w, "\n%s\n", title)
		fmt.Fprintln(w, "  CLUSTERQUEUE\tFLAVOR\tRESOURCE\tRESERVED / NOMINAL\t\tBORROWED\tPENDING\tADMITTED")
		queues := byCohort[cohort]
		slices.SortFunc(queues, func(a, b kueue.ClusterQueue) int { return strings.Compare(a.Name, b.Name) })
		for _, cq := range queues {
			used := usage(&cq)
			first := true
			for _, rg := range cq.Spec.ResourceGroups {
				for _, f := range rg.Flavors {
					for _, r := range f.Resources {
						u := used[string(f.Name)+"/"+string(r.Name)]
						name, pending, admitted := "", "", ""
						if first {
							name, pending, admitted = cq.Name, fmt.Sprint(cq.Status.PendingWorkloads), fmt.Sprint(cq.Status.AdmittedWorkloads)
							first = false
						}
						fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s/%s\t%s\t%s\t%s\n", name, f.Name, r.Name, bar(u.Total, r.NominalQuota),
							u.Total.String(), r.NominalQuota.String(), u.Borrowed.String(), pending, admitted)
					}
				}
			}
		}
	}
	_ = w.Flush()
}

// bar draws used against nominal: '#' for the used share, '.' for the
// rest; full, with a '+', when used is above nominal (borrowing).
func bar(used, nominal resource.Quantity) string {
	over := used.Cmp(nominal) > 0
	filled := barWidth
	if nominal.Sign() > 0 {
		filled = int(float64(barWidth) * used.AsApproximateFloat64() / nominal.AsApproximateFloat64())
	} else if used.Sign() == 0 {
		filled = 0
	}
	filled = min(max(filled, 0), barWidth)
	b := "[" + strings.Repeat("#", filled) + strings.Repeat(".", barWidth-filled) + "]"
	if over {
		b += "+"
	}
	return b
}
