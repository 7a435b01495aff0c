package integration

import (
	"context"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// WorkloadStatusWriter writes a change to a Workload's status: mutate
// changes wl and reports whether it changed anything (nothing is sent when
// it did not), purpose names the write in sluice's write metrics. The
// manager passes the apply layer's (apply.Workloads), which makes the write
// on the Dispatcher, ordered with sluice's admission and eviction writes of
// the same Workload, on the version read: a conflict comes back.
type WorkloadStatusWriter interface {
	Status(ctx context.Context, wl *kueue.Workload, purpose string, mutate func() bool) (bool, error)
}
