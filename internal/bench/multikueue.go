package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"text/tabwriter"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/apis/scheme"
)

// MultiKueueScenario is a MultiKueue benchmark file (bench/multikueue.yaml).
type MultiKueueScenario struct {
	MultiKueue struct {
		// Jobs are created in the manager cluster, Creators at a time.
		Jobs     int `json:"jobs"`
		Creators int `json:"creators"`
		// Workers is how many worker clusters.
		Workers int `json:"workers"`
		// PodsPerJob pods of 1 CPU each; every cluster's quota fits all
		// the Jobs, so that dispatch, not quota, is what is measured.
		PodsPerJob int32 `json:"podsPerJob"`
	} `json:"multikueue"`
}

// IsMultiKueueScenario tells whether a scenario file is a MultiKueue one.
func IsMultiKueueScenario(path string) bool {
	s, err := loadMultiKueue(path)
	return err == nil && s.MultiKueue.Jobs > 0
}

func loadMultiKueue(path string) (*MultiKueueScenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	s := &MultiKueueScenario{}
	if err := yaml.UnmarshalStrict(data, s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	mk := &s.MultiKueue
	if mk.Jobs <= 0 || mk.Workers <= 0 || mk.Creators <= 0 || mk.PodsPerJob <= 0 {
		return nil, fmt.Errorf("%s: multikueue.jobs, workers, creators and podsPerJob must be positive", path)
	}
	return s, nil
}

// MultiKueueReport is the outcome of a MultiKueue run.
type MultiKueueReport struct {
	Scenario   string `json:"scenario"`
	Machine    string `json:"machine"`
	Jobs       int    `json:"jobs"`
	Workers    int    `json:"workers"`
	Dispatched int    `json:"dispatched"`
	// DispatchedPerSecond: Jobs created in a worker per second, from the
	// first quota reservation in the manager to the last creation.
	DispatchedPerSecond float64 `json:"dispatchedPerSecond"`
	// ReservedToDispatched: from the manager's reservation to the Job's
	// creation in a worker.
	ReservedToDispatched Latency `json:"reservedToDispatched"`
	// CreatedToRunning: from the Job's creation in the manager to its
	// start (unsuspended) in a worker.
	CreatedToRunning Latency `json:"createdToRunning"`
	// CreatedToReserved and DispatchedToRunning split it: the manager's
	// own queueing and admission, and the worker's start of the Job.
	CreatedToReserved   Latency `json:"createdToReserved"`
	DispatchedToRunning Latency `json:"dispatchedToRunning"`
	// CreationSeconds is how long the bench took to create the Jobs.
	CreationSeconds float64 `json:"creationSeconds"`
	// WritesPerJob are the managers' API writes per dispatched Job, in the
	// manager cluster and in all workers together.
	ManagerWritesPerJob float64 `json:"managerClusterWritesPerJob"`
	WorkerWritesPerJob  float64 `json:"workerClustersWritesPerJob"`
	// APICeilingPerSecond is a replay of the least writes a dispatch takes
	// (the manager's Workload and its reservation, the copy and its
	// reservation in a worker, the worker's Job and its start), with no
	// logic, on the same API servers; the ratio is how close sluice gets.
	APICeilingPerSecond    float64     `json:"apiCeilingPerSecond"`
	DispatchedOverCeiling  float64     `json:"dispatchedOverCeiling"`
	ManagerCPUSeconds      float64     `json:"managerCPUSeconds"`
	ManagerPeakRSSMiB      float64     `json:"managerPeakRSSMiB"`
	WorkerManagersCPUSecs  float64     `json:"workerManagersCPUSeconds"`
	ManagerWritesByRequest writeCounts `json:"managerClusterWrites"`
	WorkerWritesByRequest  writeCounts `json:"workerClustersWrites"`
}

// mkCluster is one control plane of a MultiKueue run and its manager.
type mkCluster struct {
	cp      *controlPlane
	c       client.Client
	cs      kubernetes.Interface
	manager *managerProcess
}

const mkNamespace = "bench-mk"

const mkManagerConfig = `apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
featureGates:
  VisibilityOnDemand: false
`

// RunMultiKueue measures MultiKueue dispatch: a manager cluster and
// Workers worker clusters (each its own etcd and kube-apiserver, with
// `sluice manager` processes), Jobs created in the manager, timed until
// each starts in a worker. There is no Job controller: a Job started in
// a worker is running as far as the bench is concerned.
func RunMultiKueue(ctx context.Context, opts Options) (_ *MultiKueueReport, err error) {
	s, err := loadMultiKueue(opts.GeneratorFile)
	if err != nil {
		return nil, err
	}
	mk := s.MultiKueue
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
	var clusters []*mkCluster
	defer func() {
		for _, cl := range clusters {
			if cl.manager != nil {
				_, _ = cl.manager.stop()
			}
			_ = cl.cp.stop()
		}
	}()
	for i := 0; i <= mk.Workers; i++ {
		dir := filepath.Join(workDir, fmt.Sprintf("cluster-%d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		cp, err := startControlPlane(opts.AssetsDir, dir)
		if err != nil {
			return nil, err
		}
		cl := &mkCluster{cp: cp}
		clusters = append(clusters, cl)
		if cl.c, err = client.New(cp.restConfig, client.Options{Scheme: scheme.Scheme}); err != nil {
			return nil, err
		}
		if cl.cs, err = kubernetes.NewForConfig(cp.restConfig); err != nil {
			return nil, err
		}
	}
	manager, workers := clusters[0], clusters[1:]
	quota := fmt.Sprint(int32(mk.Jobs) * mk.PodsPerJob)
	for i, w := range workers {
		if err := createMKQueues(ctx, w.c, quota, nil); err != nil {
			return nil, err
		}
		kubeconfig, err := os.ReadFile(w.cp.kubeconfig)
		if err != nil {
			return nil, err
		}
		name := fmt.Sprintf("worker-%d", i+1)
		if err := createInOrder(ctx, manager.c,
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: configapi.DefaultNamespace}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: configapi.DefaultNamespace, Name: name}, Data: map[string][]byte{"kubeconfig": kubeconfig}},
			&kueue.MultiKueueCluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kueue.MultiKueueClusterSpec{
				ClusterSource: kueue.ClusterSource{KubeConfig: &kueue.KubeConfig{Location: name, LocationType: kueue.SecretLocationType}}}},
		); err != nil {
			return nil, err
		}
	}
	var names []string
	for i := range workers {
		names = append(names, fmt.Sprintf("worker-%d", i+1))
	}
	if err := createInOrder(ctx, manager.c,
		&kueue.MultiKueueConfig{ObjectMeta: metav1.ObjectMeta{Name: "workers"}, Spec: kueue.MultiKueueConfigSpec{Clusters: names}},
		&kueue.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: "multikueue"}, Spec: kueue.AdmissionCheckSpec{ControllerName: kueue.MultiKueueControllerName,
			Parameters: &kueue.AdmissionCheckParametersReference{APIGroup: kueue.GroupVersion.Group, Kind: "MultiKueueConfig", Name: "workers"}}},
	); err != nil {
		return nil, err
	}
	if err := createMKQueues(ctx, manager.c, quota, &kueue.AdmissionChecksStrategy{AdmissionChecks: []kueue.AdmissionCheckStrategyRule{{Name: "multikueue"}}}); err != nil {
		return nil, err
	}
	for i, cl := range clusters {
		dir := filepath.Join(workDir, fmt.Sprintf("cluster-%d", i))
		// Several managers on one machine: no visibility server (they
		// would all want its port).
		config := filepath.Join(dir, "config.yaml")
		if err := os.WriteFile(config, []byte(mkManagerConfig), 0o600); err != nil {
			return nil, err
		}
		args := append([]string{"--config", config}, opts.ManagerArgs...)
		if cl.manager, err = startManager(ctx, opts.ManagerBinary, args, cl.cp.kubeconfig, dir); err != nil {
			return nil, err
		}
	}
	if err := waitMKQueueActive(ctx, manager.c); err != nil {
		return nil, err
	}

	obs := newMKObservations()
	stopWatches, err := obs.watch(ctx, manager, workers)
	if err != nil {
		return nil, err
	}
	defer stopWatches()
	before := make([]writeCounts, len(clusters))
	for i, cl := range clusters {
		if before[i], err = scrapeAPIWrites(ctx, cl.cs); err != nil {
			return nil, err
		}
	}
	if err := createMKJobs(ctx, manager.c, mk.Jobs, mk.Creators, mk.PodsPerJob, obs); err != nil {
		return nil, err
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		n := obs.running()
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, "\rmultikueue: %d/%d Jobs running in a worker", n, mk.Jobs)
		}
		return n >= mk.Jobs, nil
	})
	if opts.Progress != nil {
		fmt.Fprintln(opts.Progress)
	}
	if err != nil {
		return nil, fmt.Errorf("waiting for the Jobs to run in the workers: %w", err)
	}
	report := &MultiKueueReport{Scenario: filepath.Base(opts.GeneratorFile), Jobs: mk.Jobs, Workers: mk.Workers,
		Machine: fmt.Sprintf("%s/%s, %d CPUs", runtime.GOOS, runtime.GOARCH, runtime.NumCPU())}
	obs.fill(report)
	report.ManagerWritesByRequest, report.WorkerWritesByRequest = writeCounts{}, writeCounts{}
	for i, cl := range clusters {
		after, err := scrapeAPIWrites(ctx, cl.cs)
		if err != nil {
			return nil, err
		}
		diff := after.minus(before[i])
		if i == 0 {
			// The bench's own Job creations are not the manager's.
			diff["POST jobs.batch"] -= float64(mk.Jobs)
			report.ManagerWritesByRequest = diff
		} else {
			for k, v := range diff {
				report.WorkerWritesByRequest[k] += v
			}
		}
	}
	report.ManagerWritesPerJob = sum(report.ManagerWritesByRequest) / float64(max(report.Dispatched, 1))
	report.WorkerWritesPerJob = sum(report.WorkerWritesByRequest) / float64(max(report.Dispatched, 1))
	stopWatches()
	for i, cl := range clusters {
		usage, err := cl.manager.stop()
		cl.manager = nil
		if err != nil {
			return nil, err
		}
		if i == 0 {
			report.ManagerCPUSeconds, report.ManagerPeakRSSMiB = usage.CPU.Seconds(), float64(usage.PeakRSS)/(1<<20)
		} else {
			report.WorkerManagersCPUSecs += usage.CPU.Seconds()
		}
	}
	if report.APICeilingPerSecond, err = mkCeiling(ctx, manager.c, workers[0].c, mk.Jobs, mk.Creators, mk.PodsPerJob); err != nil {
		return nil, fmt.Errorf("measuring the API ceiling: %w", err)
	}
	if report.APICeilingPerSecond > 0 {
		report.DispatchedOverCeiling = report.DispatchedPerSecond / report.APICeilingPerSecond
	}
	return report, nil
}

func sum(c writeCounts) float64 {
	var n float64
	for _, v := range c {
		n += v
	}
	return n
}

// createInOrder creates objs one after the other (a Secret after its
// namespace); ones that exist are left as they are.
func createInOrder(ctx context.Context, c client.Client, objs ...client.Object) error {
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %T %s: %w", o, o.GetName(), err)
		}
	}
	return nil
}

// createMKQueues creates the bench namespace and its queue "lq" with a
// ClusterQueue of quota CPUs.
func createMKQueues(ctx context.Context, c client.Client, quota string, checks *kueue.AdmissionChecksStrategy) error {
	cq := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "mk"}, Spec: kueue.ClusterQueueSpec{
		NamespaceSelector:       &metav1.LabelSelector{},
		AdmissionChecksStrategy: checks,
		ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
			Flavors: []kueue.FlavorQuotas{{Name: "default", Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse(quota)}}}}}}}}
	return createInOrder(ctx, c,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: mkNamespace}},
		&kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "default"}},
		cq,
		&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: mkNamespace, Name: "lq"}, Spec: kueue.LocalQueueSpec{ClusterQueue: "mk"}})
}

func waitMKQueueActive(ctx context.Context, c client.Client) error {
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		cq := &kueue.ClusterQueue{}
		if err := c.Get(ctx, client.ObjectKey{Name: "mk"}, cq); err != nil {
			return false, nil
		}
		return meta.IsStatusConditionTrue(cq.Status.Conditions, kueue.ConditionActive), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the manager's ClusterQueue to be active with its MultiKueue check: %w", err)
	}
	return nil
}

func mkJob(name string, pods int32) *batchv1.Job {
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: mkNamespace, Name: name, Labels: map[string]string{kueue.QueueNameLabel: "lq"}},
		Spec: batchv1.JobSpec{Parallelism: ptr.To(pods), Completions: ptr.To(pods), Suspend: ptr.To(true),
			ManagedBy: ptr.To(kueue.MultiKueueControllerName),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "main", Image: "pause",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}}}
}

// createMKJobs creates the Jobs in the manager, creators at a time.
func createMKJobs(ctx context.Context, c client.Client, jobs, creators int, pods int32, obs *mkObservations) error {
	return inParallel(jobs, creators, func(i int) error {
		name := fmt.Sprintf("job-%d", i)
		obs.mark(obs.created, name)
		if err := c.Create(ctx, mkJob(name, pods)); err != nil {
			return fmt.Errorf("creating Job %s: %w", name, err)
		}
		return nil
	})
}

// inParallel runs do(0..n-1) on workers goroutines and returns the first
// error; after one, the remaining indexes are skipped, not blocked on.
func inParallel(n, workers int, do func(i int) error) error {
	next := make(chan int)
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	failed := make(chan struct{})
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := do(i); err != nil {
					once.Do(func() { first = err; close(failed) })
				}
			}
		})
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-failed:
			break feed
		}
	}
	close(next)
	wg.Wait()
	return first
}

// mkObservations are the times the bench saw each Job's steps, by Job
// name.
type mkObservations struct {
	mu                                     sync.Mutex
	created, reserved, dispatched, started map[string]time.Time
}

func newMKObservations() *mkObservations {
	return &mkObservations{created: map[string]time.Time{}, reserved: map[string]time.Time{}, dispatched: map[string]time.Time{}, started: map[string]time.Time{}}
}

func (o *mkObservations) mark(m map[string]time.Time, name string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, seen := m[name]; !seen {
		m[name] = time.Now()
	}
}

func (o *mkObservations) running() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.started)
}

// watch follows the manager's Workloads (reservation) and the workers'
// Jobs (creation, start).
func (o *mkObservations) watch(ctx context.Context, manager *mkCluster, workers []*mkCluster) (func(), error) {
	ctx, cancel := context.WithCancel(ctx)
	watchOne := func(cl *mkCluster, obj client.Object, handle func(client.Object)) error {
		informers, err := cache.New(cl.cp.restConfig, cache.Options{Scheme: scheme.Scheme, DefaultNamespaces: map[string]cache.Config{mkNamespace: {}}})
		if err != nil {
			return err
		}
		informer, err := informers.GetInformer(ctx, obj)
		if err != nil {
			return err
		}
		on := func(o any) {
			if obj, ok := o.(client.Object); ok {
				handle(obj)
			}
		}
		if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: on, UpdateFunc: func(_, o any) { on(o) }}); err != nil {
			return err
		}
		go func() { _ = informers.Start(ctx) }()
		if !informers.WaitForCacheSync(ctx) {
			return errors.New("a watch of the bench did not sync")
		}
		return nil
	}
	err := watchOne(manager, &kueue.Workload{}, func(obj client.Object) {
		wl := obj.(*kueue.Workload)
		if owner := metav1.GetControllerOf(wl); owner != nil && meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved) {
			o.mark(o.reserved, owner.Name)
		}
	})
	for _, w := range workers {
		if err != nil {
			break
		}
		err = watchOne(w, &batchv1.Job{}, func(obj client.Object) {
			j := obj.(*batchv1.Job)
			o.mark(o.dispatched, j.Name)
			if !ptr.Deref(j.Spec.Suspend, false) {
				o.mark(o.started, j.Name)
			}
		})
	}
	if err != nil {
		cancel()
		return nil, fmt.Errorf("watching the clusters: %w", err)
	}
	return cancel, nil
}

func (o *mkObservations) fill(r *MultiKueueReport) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var toDispatch, toRun []time.Duration
	var first, last time.Time
	for name, at := range o.dispatched {
		if reserved, ok := o.reserved[name]; ok {
			toDispatch = append(toDispatch, at.Sub(reserved))
			if first.IsZero() || reserved.Before(first) {
				first = reserved
			}
		}
		if at.After(last) {
			last = at
		}
	}
	var toReserve, dispatchedToRun []time.Duration
	var firstCreated, lastCreated time.Time
	for name, at := range o.started {
		if created, ok := o.created[name]; ok {
			toRun = append(toRun, at.Sub(created))
		}
		if dispatched, ok := o.dispatched[name]; ok {
			dispatchedToRun = append(dispatchedToRun, at.Sub(dispatched))
		}
	}
	for name, at := range o.created {
		if reserved, ok := o.reserved[name]; ok {
			toReserve = append(toReserve, reserved.Sub(at))
		}
		if firstCreated.IsZero() || at.Before(firstCreated) {
			firstCreated = at
		}
		if at.After(lastCreated) {
			lastCreated = at
		}
	}
	r.CreatedToReserved, r.DispatchedToRunning = summarize(toReserve), summarize(dispatchedToRun)
	r.CreationSeconds = lastCreated.Sub(firstCreated).Seconds()
	r.Dispatched = len(o.dispatched)
	if span := last.Sub(first).Seconds(); span > 0 {
		r.DispatchedPerSecond = float64(r.Dispatched) / span
	}
	r.ReservedToDispatched, r.CreatedToRunning = summarize(toDispatch), summarize(toRun)
}

// mkCeiling replays, with no logic, the least writes of a dispatch:
// in the manager, a Workload and its reservation; in a worker, the copy,
// its reservation, the Job and its start. It returns dispatches per second.
func mkCeiling(ctx context.Context, manager, worker client.Client, jobs, creators int, pods int32) (float64, error) {
	const ns = "bench-mk-replay"
	for _, c := range []client.Client{manager, worker} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return 0, err
		}
	}
	one := func(i int) error {
		name := fmt.Sprintf("replay-%d", i)
		for _, c := range []client.Client{manager, worker} {
			wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: kueue.WorkloadSpec{QueueName: "lq",
				PodSets: []kueue.PodSet{{Name: "main", Count: pods, Template: mkJob(name, pods).Spec.Template}}}}
			if err := c.Create(ctx, wl); err != nil {
				return err
			}
			patch := client.MergeFrom(wl.DeepCopy())
			meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved", Message: "replay"})
			wl.Status.Admission = &kueue.Admission{ClusterQueue: "mk", PodSetAssignments: []kueue.PodSetAssignment{{Name: "main", Count: ptr.To(pods),
				Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{corev1.ResourceCPU: "default"}}}}
			if err := c.Status().Patch(ctx, wl, patch); err != nil {
				return err
			}
		}
		j := mkJob(name, pods)
		j.Namespace, j.Spec.ManagedBy, j.Labels = ns, nil, nil
		if err := worker.Create(ctx, j); err != nil {
			return err
		}
		patch := client.MergeFrom(j.DeepCopy())
		j.Spec.Suspend = ptr.To(false)
		return worker.Patch(ctx, j, patch)
	}
	start := time.Now()
	if err := inParallel(jobs, creators, one); err != nil {
		return 0, err
	}
	return float64(jobs) / time.Since(start).Seconds(), nil
}

// PrintTable prints the report.
func (r *MultiKueueReport) PrintTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	rows := [][2]string{
		{"scenario", fmt.Sprintf("%s (%s)", r.Scenario, r.Machine)},
		{"jobs dispatched", fmt.Sprintf("%d of %d, to %d workers", r.Dispatched, r.Jobs, r.Workers)},
		{"dispatch rate", fmt.Sprintf("%.1f Jobs/s (reserved in the manager to created in a worker)", r.DispatchedPerSecond)},
		{"API ceiling", fmt.Sprintf("%.1f dispatches/s; sluice at %.0f%%", r.APICeilingPerSecond, 100*r.DispatchedOverCeiling)},
		{"reserved to dispatched", fmt.Sprintf("mean %.2fs, p99 %.2fs", r.ReservedToDispatched.MeanSeconds, r.ReservedToDispatched.P99Seconds)},
		{"created to running", fmt.Sprintf("mean %.2fs, p99 %.2fs (the bench created the Jobs in %.1fs)", r.CreatedToRunning.MeanSeconds, r.CreatedToRunning.P99Seconds, r.CreationSeconds)},
		{"  created to reserved", fmt.Sprintf("mean %.2fs, p99 %.2fs (the manager's queueing and admission)", r.CreatedToReserved.MeanSeconds, r.CreatedToReserved.P99Seconds)},
		{"  dispatched to running", fmt.Sprintf("mean %.2fs, p99 %.2fs (the worker's start)", r.DispatchedToRunning.MeanSeconds, r.DispatchedToRunning.P99Seconds)},
		{"writes per Job", fmt.Sprintf("%.2f in the manager cluster, %.2f in the workers", r.ManagerWritesPerJob, r.WorkerWritesPerJob)},
		{"manager", fmt.Sprintf("%.1fs CPU, %.0f MiB peak; worker managers %.1fs CPU", r.ManagerCPUSeconds, r.ManagerPeakRSSMiB, r.WorkerManagersCPUSecs)},
	}
	for _, row := range rows {
		fmt.Fprintf(tw, "%s\t%s\n", row[0], row[1])
	}
	return tw.Flush()
}

// WriteJSON writes the report.
func (r *MultiKueueReport) WriteJSON(path string) error {
	data, err := yaml.Marshal(r)
	if err != nil {
		return err
	}
	json, err := yaml.YAMLToJSON(data)
	if err != nil {
		return err
	}
	return os.WriteFile(path, json, 0o644)
}
