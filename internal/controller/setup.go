package controller

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/apply"
	"github.com/sluicehq/sluice/internal/metrics"
	"github.com/sluicehq/sluice/internal/quota"
	"github.com/sluicehq/sluice/internal/scheduler"
	"github.com/sluicehq/sluice/internal/workload"
)

// Options are what the reconcilers need to know of the rest of sluice.
type Options struct {
	// StopsFirst tells whether an evicted workload's job must stop before
	// its reservation is cleared (see WorkloadReconciler).
	StopsFirst func(*kueue.Workload) bool
	// Resources is how pending workloads' requests count; nil: as they
	// are.
	Resources *workload.ResourcePolicy
	// Retention deletes finished and deactivated workloads after a while;
	// nil keeps them.
	Retention *Retention
	// FairSharing turns fair sharing on; nil leaves it off.
	FairSharing *scheduler.FairSharing
	// Fence tells whether this manager surely holds the lease; nil when
	// there is no leader election.
	Fence apply.Fence
	// Clock is the one clock of admission; nil is the real one.
	Clock apply.Clock
	// Client is what the reconcilers and the apply layer write with (the
	// manager's client, fenced on the lease); nil is the manager's.
	Client client.Client
	// LocalQueueMetrics picks the LocalQueues with per-LocalQueue series;
	// nil: none.
	LocalQueueMetrics func(*kueue.LocalQueue) bool
	// ResourceMetrics turns on the per-flavor resource series.
	ResourceMetrics bool
	// Build is what kueue_build_info says.
	Build metrics.Build
	// PodsReady is waitForPodsReady; nil: off.
	PodsReady *PodsReadyPolicy
	// BlockAdmission is waitForPodsReady.blockAdmission.
	BlockAdmission bool
	// CheckStuckAfter: see WorkloadReconciler.StuckAfter.
	CheckStuckAfter time.Duration
}

// Core is what Setup made that other parts of the manager use.
type Core struct {
	// Tracker is the queues' state (the visibility server reads it).
	Tracker *apply.Tracker
	// Workloads is the one path of Workload status writes: the job
	// integrations and the admission check controllers write through it.
	Workloads *apply.Workloads
}

// Setup registers the field indexes, every reconciler of this package and
// the apply layer they feed.
func Setup(ctx context.Context, mgr ctrl.Manager, opts Options) (Core, error) {
	if err := SetupIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		return Core{}, err
	}
	c := opts.Client
	if c == nil {
		c = mgr.GetClient()
	}
	var clk apply.Clock = clock.RealClock{}
	if opts.Clock != nil {
		clk = opts.Clock
	}
	tracker := apply.NewTracker()
	tracker.StopsFirst = opts.StopsFirst
	tracker.Resources = opts.Resources
	tracker.Cache.SetFairSharing(opts.FairSharing)
	dispatcher := apply.NewDispatcher(apply.DispatcherOptions{
		Workers: Writers, BackgroundWorkers: Writers / 4, BaseBackoff: 100 * time.Millisecond, MaxBackoff: time.Minute,
		Fence: opts.Fence, Clock: clk,
	})
	recorder := metricsRecorder(mgr, tracker, opts)
	tracker.Metrics = recorder
	workloads := &apply.Workloads{Client: c, APIReader: mgr.GetAPIReader(), Tracker: tracker, Dispatcher: dispatcher, Clock: clk, Metrics: recorder}
	reconcilers := []interface {
		SetupWithManager(ctrl.Manager) error
	}{
		&ResourceFlavorReconciler{Client: c, Tracker: tracker},
		&ClusterQueueReconciler{Client: c, Tracker: tracker},
		&LocalQueueReconciler{Client: c, Tracker: tracker},
		&CohortReconciler{Client: c, Recorder: mgr.GetEventRecorder("sluice-cohort-controller"), Tracker: tracker},
		&NamespaceReconciler{Client: c, Tracker: tracker},
		&WorkloadReconciler{Client: c, Tracker: tracker, Workloads: workloads, Clock: clk, StopsFirst: opts.StopsFirst, Retention: opts.Retention,
			PodsReady: opts.PodsReady, StuckAfter: opts.CheckStuckAfter},
	}
	for _, r := range reconcilers {
		if err := r.SetupWithManager(mgr); err != nil {
			return Core{}, fmt.Errorf("setting up %T: %w", r, err)
		}
	}
	admitter := &apply.Admitter{Metrics: recorder, Client: c, Tracker: tracker, Workloads: workloads, Dispatcher: dispatcher, Clock: clk,
		Verdicts:        &apply.Verdicts{Workloads: workloads, Heads: VerdictHeads, Grace: VerdictGrace, Refresh: VerdictRefresh, PerSecond: 20},
		PreemptionGrace: PreemptionGrace, DrainTimeout: 30 * time.Second, CyclePause: CyclePause, BlockAdmission: opts.BlockAdmission}
	if err := mgr.Add(admitter); err != nil {
		return Core{}, fmt.Errorf("adding the admitter: %w", err)
	}
	setMetricsSource(mgr, tracker, opts)
	if err := mgr.Add(&apply.QueueStatusWriter{Client: c, Tracker: tracker, Dispatcher: dispatcher, Clock: clk, Period: time.Second, MinInterval: QueueStatusMinInterval, MaxWritesPerPeriod: QueueStatusWritesPerSecond}); err != nil {
		return Core{}, fmt.Errorf("adding the queue status writer: %w", err)
	}
	return Core{Tracker: tracker, Workloads: workloads}, nil
}

// QueueStatusWritesPerSecond bounds the ClusterQueue and LocalQueue status
// writes: a few dozen queues stay current every second, a thousand busy ones
// take turns.
const QueueStatusWritesPerSecond = 25

// QueueStatusMinInterval is how often at most the status of a queue that
// keeps changing is written (one that drained is written at once):
// dashboards read the live numbers from the metrics; a status write per
// queue per second would cost a third of the writes of a busy cluster.
const QueueStatusMinInterval = 10 * time.Second

// Writers is how many status writes the apply layer keeps in flight (a
// quarter of them for background writes); the benchmark's API ceiling
// replays with the same number.
const Writers = 16

// ignoreConflict drops a write conflict: the cache was behind the API
// server, and the newer version's watch event reconciles the object again.
func ignoreConflict(res ctrl.Result, err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) {
		return res, nil
	}
	return res, err
}

// PreemptionGrace is how long a preemption waits to be decided again on a
// newer view before any victim is evicted, while the preemptor holds the
// free quota it needs: several watch delays under load, short next to any
// job worth preempting, long enough that room that jobs ending anyway give
// back gathers for it. Under Kueue's runner, whose finish writes lag
// seconds behind a job's end, 1 s still evicted about 50 workloads that
// were about to end.
const PreemptionGrace = 3 * time.Second

// CyclePause is the least time between the starts of two admission
// cycles: under load, events come faster than cycles are useful (each
// takes a snapshot), and 50 ms more before an admission is little next to
// the API round trips that create, admit and start a job.
const CyclePause = 50 * time.Millisecond

// VerdictHeads is how many workloads of each ClusterQueue that wait for
// room carry why: the ones the queue serves next. The others wait behind
// them; writing each of a backlog of thousands costs as many writes as
// admitting them. Other reasons (never fits, no flavor, no queue) are
// written for every workload.
const VerdictHeads = 1

// VerdictRefresh is how often new numbers under the same reason are
// written to a waiting workload; a new reason is written at once.
const VerdictRefresh = 10 * time.Second

// VerdictGrace is how long a workload waits before sluice writes why: most
// are admitted sooner, and the write would cost as much as the admission.
const VerdictGrace = 2 * time.Second

// replicaRole is this manager's replica_role: standalone without leader
// election, else leader once elected.
func replicaRole(mgr ctrl.Manager, opts Options) func() string {
	return func() string {
		if opts.Fence == nil {
			return metrics.RoleStandalone
		}
		select {
		case <-mgr.Elected():
			return metrics.RoleLeader
		default:
			return metrics.RoleFollower
		}
	}
}

// metricsRecorder counts the events (admission cycles, admissions) of this
// manager, per LocalQueue too for those the configuration picks.
func metricsRecorder(mgr ctrl.Manager, tracker *apply.Tracker, opts Options) *metrics.Recorder {
	var localQueue func(namespace, name string) bool
	if pick := opts.LocalQueueMetrics; pick != nil {
		localQueue = func(namespace, name string) bool {
			lq, ok := tracker.Cache.LocalQueue(namespace + "/" + name)
			return ok && pick(lq)
		}
	}
	cohorts := func(clusterQueue string) []string {
		cq, ok := tracker.Cache.ClusterQueue(clusterQueue)
		if !ok || cq.Spec.CohortName == "" {
			return nil
		}
		parents := tracker.Cache.CohortParents()
		return quota.Ancestors(string(cq.Spec.CohortName), func(c string) (string, bool) { p, ok := parents[c]; return p, ok }).Chain
	}
	return metrics.NewRecorder(replicaRole(mgr, opts), localQueue, cohorts)
}

// setMetricsSource points the kueue_* gauges at this manager's tracker. The
// queues and quotas are known to the leader (the reconcilers that feed the
// tracker run there): a follower reports only its build and role, so that
// sums over replicas count each workload once.
func setMetricsSource(mgr ctrl.Manager, tracker *apply.Tracker, opts Options) {
	role := replicaRole(mgr, opts)
	metrics.SetSource(func() metrics.State {
		r := role()
		if r == metrics.RoleFollower {
			return metrics.State{Role: r}
		}
		return tracker.MetricsState(r, opts.LocalQueueMetrics, opts.ResourceMetrics)
	}, opts.Build)
}
