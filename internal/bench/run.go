package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/apis/scheme"
)

// Options configure a run.
type Options struct {
	// GeneratorFile is the scenario.
	GeneratorFile string
	// AssetsDir holds etcd and kube-apiserver; used unless Kubeconfig is set.
	AssetsDir string
	// Kubeconfig points at an existing cluster with no sluice running in it.
	Kubeconfig string
	// ManagerBinary is the sluice binary whose manager subcommand is measured.
	ManagerBinary string
	// ManagerArgs are added to the manager's command line (for example
	// --pprof-bind-address to profile it during a run).
	ManagerArgs []string
	// Creators is how many creations are in flight at most.
	Creators int
	// Timeout bounds the scenario, from the first creation to the last
	// Finished write.
	Timeout time.Duration
	// WorkDir holds the logs and etcd's data; empty means a temporary
	// folder, removed after a successful run.
	WorkDir string
	// Progress receives the progress line; nil for none.
	Progress io.Writer
}

// DefaultCreators matches the manager's writers: creation and admission
// get the same concurrency.
const DefaultCreators = 16

// Run measures one scenario and returns its report.
func Run(ctx context.Context, opts Options) (report *Report, err error) {
	gen, err := Load(opts.GeneratorFile)
	if err != nil {
		return nil, err
	}
	plan := gen.Expand()
	workDir, removeWorkDir, err := prepareWorkDir(opts.WorkDir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w (logs in %s)", err, workDir)
			return
		}
		removeWorkDir()
	}()

	var cp *controlPlane
	if opts.Kubeconfig != "" {
		cp, err = connect(opts.Kubeconfig)
	} else {
		cp, err = startControlPlane(opts.AssetsDir, workDir)
	}
	if err != nil {
		return nil, err
	}
	defer func() {
		if stopErr := cp.stop(); stopErr != nil && err == nil {
			err = fmt.Errorf("stopping the control plane: %w", stopErr)
		}
	}()
	c, err := client.New(cp.restConfig, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, fmt.Errorf("creating a client: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cp.restConfig)
	if err != nil {
		return nil, fmt.Errorf("creating a clientset: %w", err)
	}
	if err := createQueues(ctx, c, plan); err != nil {
		return nil, err
	}
	mgr, err := startManager(ctx, opts.ManagerBinary, opts.ManagerArgs, cp.kubeconfig, workDir)
	if err != nil {
		return nil, err
	}
	stopped := false
	defer func() {
		if !stopped {
			_, _ = mgr.stop()
		}
	}()
	if err := waitQueuesActive(ctx, c, plan); err != nil {
		return nil, err
	}

	obs := observations{scenario: strings.TrimSuffix(filepath.Base(opts.GeneratorFile), filepath.Ext(opts.GeneratorFile)), plan: plan}
	t, notManagers, err := runScenario(ctx, cp, c, cs, plan, opts, &obs)
	if err != nil {
		return nil, err
	}
	if obs.cycles, err = scrapeCycles(ctx, mgr.metricsURL); err != nil {
		return nil, err
	}
	after, err := scrapeAPIWrites(ctx, cs)
	if err != nil {
		return nil, err
	}
	stopped = true
	if obs.usage, err = mgr.stop(); err != nil {
		return nil, err
	}
	obs.managerWrites = after.minus(notManagers)
	obs.runs = t.snapshot()

	if err := c.Create(ctx, newNamespace(replayNamespace)); err != nil {
		return nil, fmt.Errorf("creating namespace %s: %w", replayNamespace, err)
	}
	admitted := int(t.admitted.Load())
	if obs.ceilingPerSecond, err = replayCeiling(ctx, c, plan.Workloads, admitted, creators(opts)); err != nil {
		return nil, fmt.Errorf("measuring the API ceiling: %w", err)
	}
	return buildReport(obs), nil
}

func creators(opts Options) int {
	if opts.Creators > 0 {
		return opts.Creators
	}
	return DefaultCreators
}

// runScenario creates the Workloads on schedule and mimics their execution
// until every one finished. It returns the tracker and the API's write
// counts before the scenario plus the bench's own writes, so that the
// difference with the counts after is the manager's.
func runScenario(ctx context.Context, cp *controlPlane, c client.Client, cs kubernetes.Interface, plan *Plan, opts Options, obs *observations) (*tracker, writeCounts, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	t := newTracker(plan.Workloads, finishByPatch(c, namespace))
	defer t.stop()
	informers, err := cache.New(cp.restConfig, cache.Options{Scheme: scheme.Scheme, DefaultNamespaces: map[string]cache.Config{namespace: {}}})
	if err != nil {
		return nil, nil, fmt.Errorf("creating the Workload watch: %w", err)
	}
	informer, err := informers.GetInformer(ctx, &kueue.Workload{})
	if err != nil {
		return nil, nil, fmt.Errorf("watching Workloads: %w", err)
	}
	if _, err := informer.AddEventHandler(t.handler(ctx)); err != nil {
		return nil, nil, fmt.Errorf("watching Workloads: %w", err)
	}
	go func() { _ = informers.Start(ctx) }()
	if !informers.WaitForCacheSync(ctx) {
		return nil, nil, errors.New("the Workload watch did not sync")
	}
	before, err := scrapeAPIWrites(ctx, cs)
	if err != nil {
		return nil, nil, err
	}

	obs.start = time.Now()
	var progress sync.WaitGroup
	progressDone := make(chan struct{})
	if opts.Progress != nil {
		progress.Go(func() {
			reportProgress(opts.Progress, t, len(plan.Workloads), obs.start, progressDone)
		})
	}
	defer func() { close(progressDone); progress.Wait() }()

	creationDone := make(chan error, 1)
	var creates int64
	go func() {
		var err error
		creates, err = createOnSchedule(ctx, c, namespace, plan.Workloads, creators(opts), obs.start, t.requested, func(int, *kueue.Workload) { t.created.Add(1) })
		creationDone <- err
	}()
	timeout := time.NewTimer(opts.Timeout)
	defer timeout.Stop()
	for finished := false; !finished; {
		select {
		case err := <-creationDone:
			if err != nil {
				return nil, nil, err
			}
			creationDone = nil
		case err := <-t.failed:
			return nil, nil, err
		case <-t.allFinished:
			finished = true
		case <-timeout.C:
			return nil, nil, fmt.Errorf("the scenario did not finish within %s: %d of %d Workloads created, %d admitted, %d finished",
				opts.Timeout, t.created.Load(), len(plan.Workloads), t.admitted.Load(), t.finished.Load())
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
	if creationDone != nil { // every Workload finished, so every creation returned
		if err := <-creationDone; err != nil {
			return nil, nil, err
		}
	}
	for _, run := range t.snapshot() {
		if run.finishedAt.After(obs.end) {
			obs.end = run.finishedAt
		}
	}
	notManagers := writeCounts{}
	maps.Copy(notManagers, before)
	notManagers[writeKey("POST", "workloads", kueue.GroupVersion.Group, "")] += float64(creates)
	notManagers[writeKey("PATCH", "workloads", kueue.GroupVersion.Group, "status")] += float64(t.finishWrites.Load())
	return t, notManagers, nil
}

// createQueues creates the manager's namespace, the bench namespace, the
// flavor, and each planned ClusterQueue with its LocalQueue.
func createQueues(ctx context.Context, c client.Client, plan *Plan) error {
	if err := c.Create(ctx, newNamespace(namespace)); apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("namespace %s exists: a previous run's objects are in this cluster; use a fresh one", namespace)
	} else if err != nil {
		return fmt.Errorf("creating namespace %s: %w", namespace, err)
	}
	objs := []client.Object{newNamespace(configapi.DefaultNamespace), newFlavor()}
	for _, q := range plan.Queues {
		objs = append(objs, newClusterQueue(q), newLocalQueue(namespace, q))
	}
	return createAll(ctx, c, objs)
}

// createAll creates objs with a few requests in flight; ones that exist are
// left as they are.
func createAll(ctx context.Context, c client.Client, objs []client.Object) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan client.Object)
	var wg sync.WaitGroup
	for range DefaultCreators {
		wg.Go(func() {
			for obj := range next {
				if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
					cancel(fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err))
				}
			}
		})
	}
	for _, obj := range objs {
		select {
		case next <- obj:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	return context.Cause(ctx)
}

// waitQueuesActive waits until the manager reports every planned
// ClusterQueue Active.
func waitQueuesActive(ctx context.Context, c client.Client, plan *Plan) error {
	planned := map[string]bool{}
	for _, q := range plan.Queues {
		planned[q.Name] = true
	}
	active := 0
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		list := &kueue.ClusterQueueList{}
		if err := c.List(ctx, list); err != nil {
			return false, nil
		}
		active = 0
		for _, cq := range list.Items {
			if planned[cq.Name] && meta.IsStatusConditionTrue(cq.Status.Conditions, kueue.ConditionActive) {
				active++
			}
		}
		return active == len(planned), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the ClusterQueues to be Active (%d of %d): %w", active, len(planned), err)
	}
	return nil
}

func prepareWorkDir(dir string) (string, func(), error) {
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", nil, fmt.Errorf("creating the work folder: %w", err)
		}
		return dir, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "sluice-bench-")
	if err != nil {
		return "", nil, fmt.Errorf("creating a work folder: %w", err)
	}
	return dir, func() { _ = os.RemoveAll(dir) }, nil
}

// reportProgress prints created / admitted / finished until done: rewriting
// one line on a terminal, a line every 5 s elsewhere.
func reportProgress(out io.Writer, t *tracker, total int, start time.Time, done <-chan struct{}) {
	terminal := isTerminal(out)
	period := 5 * time.Second
	if terminal {
		period = time.Second
	}
	ticker := time.NewTicker(period)
	defer ticker.Stop()
	line := func() string {
		return fmt.Sprintf("%4.0fs  created %d/%d  admitted %d  finished %d", time.Since(start).Seconds(), t.created.Load(), total, t.admitted.Load(), t.finished.Load())
	}
	for {
		select {
		case <-done:
			if terminal {
				fmt.Fprintf(out, "\r%s\n", line())
			}
			return
		case <-ticker.C:
			if terminal {
				fmt.Fprintf(out, "\r%s", line())
			} else {
				fmt.Fprintln(out, line())
			}
		}
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
