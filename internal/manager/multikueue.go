package manager

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	"github.com/sluicehq/sluice/apis/scheme"
	"github.com/sluicehq/sluice/internal/controller/multikueue"
	"github.com/sluicehq/sluice/internal/integration"
)

// DefaultMultiKueueProbeInterval is how often a worker cluster is looked
// at: a lost worker turns inactive within it.
const DefaultMultiKueueProbeInterval = 10 * time.Second

// multiKueueEnabled: the MultiKueue feature gate, on unless set off (as
// in Kueue, where it is beta).
func multiKueueEnabled(cfg *configapi.Configuration) bool {
	on, set := cfg.FeatureGates[configapi.MultiKueueGate]
	return !set || on
}

// setupMultiKueue adds the MultiKueue controllers: the worker
// connections, their clusters' and checks' conditions, the dispatch of
// the enabled kinds that can be dispatched, and the garbage collector.
// Without them (gate off), a MultiKueue check has no Active condition and
// its ClusterQueues admit nothing.
func setupMultiKueue(mgr ctrl.Manager, cfg *configapi.Configuration, writer client.Client, statuses integration.WorkloadStatusWriter, in *integrations, restConfig *rest.Config, probe time.Duration) error {
	if !multiKueueEnabled(cfg) {
		return nil
	}
	if probe <= 0 {
		probe = DefaultMultiKueueProbeInterval
	}
	mk := cfg.MultiKueue
	adapters := map[schema.GroupVersionKind]integration.RemoteAdapter{}
	remotes := &multikueue.Remotes{
		Scheme: scheme.Scheme,
		Origin: *mk.Origin,
		// Worker clients are throttled as the manager's own are.
		RestConfigFor: func(c *rest.Config) *rest.Config {
			c.QPS, c.Burst = restConfig.QPS, restConfig.Burst
			return c
		},
	}
	for _, k := range in.kinds {
		if k.Remote != nil {
			adapters[k.GVK] = k.Remote
			remotes.Kinds = append(remotes.Kinds, k.Remote)
		}
	}
	if err := mgr.Add(remotes); err != nil {
		return fmt.Errorf("adding the worker connections: %w", err)
	}
	clusters := &multikueue.ClusterReconciler{
		Client:        writer,
		Remotes:       remotes,
		Namespace:     *cfg.Namespace,
		AllowInsecure: cfg.FeatureGates[configapi.MultiKueueAllowInsecureKubeconfigsGate],
		ProbeInterval: probe,
	}
	if err := clusters.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up MultiKueueClusters: %w", err)
	}
	if err := (&multikueue.AdmissionCheckReconciler{Client: writer}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the MultiKueue admission checks: %w", err)
	}
	step := 0
	if c := mk.IncrementalDispatcherConfig; c != nil {
		step = int(ptr.Deref(c.StepSize, configapi.DefaultIncrementalStepSize))
	}
	workloads := &multikueue.WorkloadReconciler{
		Client:            writer,
		Workloads:         statuses,
		Remotes:           remotes,
		Clock:             clock.RealClock{},
		Dispatcher:        multikueue.Dispatcher{Name: *mk.DispatcherName, StepSize: step},
		Origin:            *mk.Origin,
		WorkerLostTimeout: mk.WorkerLostTimeout.Duration,
		Adapters:          adapters,
	}
	if err := workloads.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up MultiKueue dispatch: %w", err)
	}
	if err := mgr.Add(&multikueue.GarbageCollector{Workloads: workloads, Interval: mk.GCInterval.Duration}); err != nil {
		return fmt.Errorf("adding the MultiKueue garbage collector: %w", err)
	}
	return nil
}
