// Package manager assembles a controller-runtime manager from a loaded
// Configuration: client throttling, leader election, health and metrics
// endpoints, the webhook server and its certificates, the reconcilers and the
// webhooks. It owns wiring only; behaviour lives in the packages it wires.
package manager

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"
	"slices"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/apis/scheme"
	"github.com/sluicehq/sluice/config"
	"github.com/sluicehq/sluice/internal/apply"
	"github.com/sluicehq/sluice/internal/controller"
	"github.com/sluicehq/sluice/internal/integration/kinds"
	"github.com/sluicehq/sluice/internal/metrics"
	"github.com/sluicehq/sluice/internal/scheduler"
	sluicewebhook "github.com/sluicehq/sluice/internal/webhook"
	"github.com/sluicehq/sluice/internal/workload"
)

// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations;mutatingwebhookconfigurations,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch

// Options are the choices that are not part of the configuration file.
type Options struct {
	// EnableWebhooks serves the admission webhooks; off for benchmarks against
	// a bare API server.
	EnableWebhooks bool
	// GracefulShutdownTimeout bounds how long the controllers may take to
	// stop once the manager's context ends; nil keeps controller-runtime's
	// default (30s).
	GracefulShutdownTimeout *time.Duration
	// InsecureMetrics serves the metrics over plain HTTP without
	// authentication: for local runs and benchmarks that scrape the
	// manager on loopback. Installed managers serve HTTPS.
	InsecureMetrics bool
	// MetricsCertDir holds the metrics serving certificate (tls.crt,
	// tls.key); empty: a self-signed one, made at startup.
	MetricsCertDir string
	// Build is what kueue_build_info reports.
	Build metrics.Build
	// PodName and PodNamespace name the Pod the manager runs in (the
	// downward API's POD_NAME, POD_NAMESPACE); empty outside a Pod. The
	// leader labels it (LeaderLabel) for the visibility Service.
	PodName, PodNamespace string
	// CheckStuckAfter is how long an admission check may stay not Ready
	// before the workload's Admitted condition says for how long (0:
	// never); DefaultCheckStuckAfter by the command's flag.
	CheckStuckAfter time.Duration
	// MultiKueueProbeInterval is how often each worker cluster is looked
	// at (0: DefaultMultiKueueProbeInterval).
	MultiKueueProbeInterval time.Duration
	// SeveralPerProcess lets a process build more than one manager (tests
	// that restart one): controller names are then not checked for
	// uniqueness, which guards against registering metrics twice.
	SeveralPerProcess bool
}

// New builds a manager with every controller and webhook registered. The
// caller starts it.
func New(ctx context.Context, restConfig *rest.Config, cfg *configapi.Configuration, opts Options) (_ ctrl.Manager, err error) {
	if errs := kinds.ValidateFrameworks(cfg.Integrations.Frameworks); len(errs) > 0 {
		return nil, fmt.Errorf("the configuration: %w", errs.ToAggregate())
	}
	restConfig = rest.CopyConfig(restConfig)
	applyClientConnection(restConfig, cfg.ClientConnection)

	le := cfg.LeaderElection
	var fence *apply.LeaseFence
	if *le.LeaderElect {
		if fence, err = newLeaseFence(restConfig, cfg); err != nil {
			return nil, err
		}
	}
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme: scheme.Scheme,
		// The certificate rotator reads its Secret through the cache: watch
		// Secrets of the manager's own namespace only.
		// Pods: only those sluice queues (labelled by its webhook), not every
		// Pod of the cluster.
		// managedFields are dropped from cached objects: sluice never reads
		// them, and they are a good part of each of thousands of Workloads.
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
			&corev1.Secret{}: {Namespaces: map[string]cache.Config{*cfg.Namespace: {}}},
			&corev1.Pod{}:    {Label: labels.SelectorFromSet(labels.Set{kueue.ManagedLabel: "true"})},
		}, DefaultTransform: cache.TransformStripManagedFields()},
		// Kinds whose Go types sluice can't compile against (TrainJobs)
		// are read as unstructured objects: from the cache too, like the
		// typed ones.
		Client:                     client.Options{Cache: &client.CacheOptions{Unstructured: true}},
		LeaderElection:             *le.LeaderElect,
		LeaderElectionID:           le.ResourceName,
		LeaderElectionNamespace:    le.ResourceNamespace,
		LeaderElectionResourceLock: "leases",
		// The fence wraps the lock: it knows when the lease was last
		// surely held, and the apply layer writes only within that.
		LeaderElectionResourceLockInterface: fenceLock(fence),
		LeaderElectionReleaseOnCancel:       true,
		LeaseDuration:                       &le.LeaseDuration.Duration,
		RenewDeadline:                       &le.RenewDeadline.Duration,
		RetryPeriod:                         &le.RetryPeriod.Duration,
		Metrics:                             metricsOptions(cfg.Metrics.BindAddress, opts),
		HealthProbeBindAddress:              cfg.Health.HealthProbeBindAddress,
		PprofBindAddress:                    cfg.PprofBindAddress,
		GracefulShutdownTimeout:             opts.GracefulShutdownTimeout,
		Controller:                          controllerConfig(cfg.Controller, opts.SeveralPerProcess),
		ReadinessEndpointName:               cfg.Health.ReadinessEndpointName,
		LivenessEndpointName:                cfg.Health.LivenessEndpointName,
		WebhookServer: webhook.NewServer(webhook.Options{
			Host:    cfg.Webhook.Host,
			Port:    *cfg.Webhook.Port,
			CertDir: cfg.Webhook.CertDir,
		}),
	})
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	guard := newFrameworkGuard(cfg.Integrations.Frameworks, kinds.All())
	awaited, err := guard.checkServed(mgr.GetRESTMapper())
	if err != nil {
		return nil, err
	}
	if guard.watching() {
		if err := mgr.Add(runnableFunc(func(ctx context.Context) error { return guard.watch(ctx, mgr.GetCache()) })); err != nil {
			return nil, fmt.Errorf("adding the framework guard: %w", err)
		}
	}
	if len(awaited) > 0 {
		ctrl.LoggerFrom(ctx).Info("enabled integrations whose kind the cluster does not serve yet: set up on restart once it does", "frameworks", slices.Sorted(maps.Keys(awaited)))
	}
	in, err := newIntegrations(cfg, mgr.GetAPIReader(), awaited)
	if err != nil {
		return nil, err
	}
	if in.self, err = selfUser(ctx, restConfig); err != nil {
		return nil, err
	}
	if in.parentsPodsOnly {
		ctrl.LoggerFrom(ctx).Info("the pod integration is on for the Pods of the kinds queued through their Pods only (\"pod\" is not in integrations.frameworks): plain Pods are not queued")
	}
	// The leader's controllers write through the fence.
	writer := mgr.GetClient()
	copts := controller.Options{StopsFirst: in.stopsFirst, FairSharing: fairSharingOf(cfg.FairSharing), Resources: resourcePolicyOf(cfg.Resources),
		Retention: retentionOf(cfg.ObjectRetentionPolicies), Client: writer, Build: opts.Build,
		ResourceMetrics: cfg.Metrics.EnableClusterQueueResources, CheckStuckAfter: opts.CheckStuckAfter}
	copts.PodsReady, copts.BlockAdmission = podsReadyOf(cfg.WaitForPodsReady)
	if copts.LocalQueueMetrics, err = localQueueMetricsOf(cfg.Metrics.LocalQueueMetrics); err != nil {
		return nil, err
	}
	if fence != nil {
		copts.Fence = fence
		copts.Client = fencedClient(writer, fence)
	}
	core, err := controller.Setup(ctx, mgr, copts)
	if err != nil {
		return nil, err
	}
	tracker := core.Tracker
	if err := in.setupReconcilers(ctx, mgr, copts.Client, core.Workloads); err != nil {
		return nil, err
	}
	if err := setupProvisioning(mgr, copts.Client, core.Workloads); err != nil {
		return nil, err
	}
	if err := setupMultiKueue(mgr, cfg, copts.Client, core.Workloads, in, restConfig, opts.MultiKueueProbeInterval); err != nil {
		return nil, err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, fmt.Errorf("adding the health check: %w", err)
	}
	webhooksReady := &readiness{}
	if err := mgr.AddReadyzCheck("webhooks", webhooksReady.check); err != nil {
		return nil, fmt.Errorf("adding the readiness check: %w", err)
	}
	if visibilityEnabled(cfg) && opts.PodName != "" {
		label := &leaderLabel{client: mgr.GetClient(), pod: types.NamespacedName{Namespace: opts.PodNamespace, Name: opts.PodName}}
		if err := label.clear(ctx); err != nil {
			return nil, err
		}
		if err := mgr.Add(label); err != nil {
			return nil, fmt.Errorf("adding the leader label: %w", err)
		}
	}
	if !opts.EnableWebhooks {
		webhooksReady.set(func(*http.Request) error { return nil })
		if visibilityEnabled(cfg) {
			if err := addVisibilityServer(mgr, restConfig, cfg, tracker, "", nil); err != nil {
				return nil, err
			}
		}
		return mgr, nil
	}
	scope := newWebhookScope(cfg, in.enabled)
	err = mgr.Add(runnableFunc(func(ctx context.Context) error {
		// An unscoped configuration only blocks more while sluice is down:
		// say so, and go on serving.
		if err := scopeWebhooks(ctx, mgr.GetAPIReader(), mgr.GetClient(), scope); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "the integrations' webhooks could not be scoped to the configuration")
			return nil
		}
		ctrl.LoggerFrom(ctx).Info("integration webhooks scoped", "enabled", in.enabled, "namespaces", scope.namespaces)
		return nil
	}))
	if err != nil {
		return nil, err
	}
	certsReady, err := setupWebhooks(ctx, mgr, cfg, in, webhooksReady)
	if err != nil {
		return nil, err
	}
	if visibilityEnabled(cfg) {
		if err := addVisibilityServer(mgr, restConfig, cfg, tracker, cfg.Webhook.CertDir, certsReady); err != nil {
			return nil, err
		}
	}
	return mgr, nil
}

// setupWebhooks registers the webhooks at once with external certificates, or
// once the rotator has written the certificates: the webhook server must not
// start before its certificates exist. It returns the channel closed once
// the rotator wrote them (nil with external certificates).
func setupWebhooks(ctx context.Context, mgr ctrl.Manager, cfg *configapi.Configuration, in *integrations, ready *readiness) (<-chan struct{}, error) {
	register := func() error {
		// Register goes through the server's defaulting once, which its
		// Start runs too; the builders below read the server's mux without
		// it. Registering first orders this goroutine after a Start that
		// already runs (the race detector caught the unordered read).
		mgr.GetWebhookServer().Register("/sluice-webhooks-registered", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusOK)
		}))
		// kueue.x-k8s.io/v1beta1 <-> v1beta2, through the hub (v1beta2).
		mgr.GetWebhookServer().Register("/convert", conversion.NewWebhookHandler(mgr.GetScheme(), mgr.GetConverterRegistry()))
		if err := sluicewebhook.Setup(mgr); err != nil {
			return fmt.Errorf("setting up webhooks: %w", err)
		}
		if err := in.setupWebhooks(mgr); err != nil {
			return fmt.Errorf("setting up the integrations' webhooks: %w", err)
		}
		ready.set(mgr.GetWebhookServer().StartedChecker())
		return nil
	}
	icm := cfg.InternalCertManagement
	if !*icm.Enable {
		return nil, register()
	}
	certsReady := make(chan struct{})
	names := namesOfWebhookConfigurations(cfg)
	conversions, err := conversionWebhooks()
	if err != nil {
		return nil, err
	}
	webhooks := append(conversions, rotator.WebhookInfo{Name: names.validating, Type: rotator.Validating}, rotator.WebhookInfo{Name: names.mutating, Type: rotator.Mutating})
	dnsNames := []string{fmt.Sprintf("%s.%s.svc.cluster.local", *icm.WebhookServiceName, *cfg.Namespace)}
	if visibilityEnabled(cfg) {
		service, err := visibilityService(ctx, mgr.GetAPIReader(), cfg)
		if err != nil {
			return nil, err
		}
		dnsNames = append(dnsNames, fmt.Sprintf("%s.%s.svc", service.Name, service.Namespace), fmt.Sprintf("%s.%s.svc.cluster.local", service.Name, service.Namespace))
		for _, name := range visibilityAPIServices {
			webhooks = append(webhooks, rotator.WebhookInfo{Name: name, Type: rotator.APIService})
		}
	}
	err = rotator.AddRotator(mgr, &rotator.CertRotator{
		SecretKey:             types.NamespacedName{Namespace: *cfg.Namespace, Name: *icm.WebhookSecretName},
		CertDir:               cfg.Webhook.CertDir,
		CAName:                "sluice-ca",
		CAOrganization:        "sluice",
		DNSName:               fmt.Sprintf("%s.%s.svc", *icm.WebhookServiceName, *cfg.Namespace),
		ExtraDNSNames:         dnsNames,
		IsReady:               certsReady,
		Webhooks:              webhooks,
		RequireLeaderElection: false,
	})
	if err != nil {
		return nil, fmt.Errorf("setting up certificate rotation: %w", err)
	}
	return certsReady, mgr.Add(runnableFunc(func(ctx context.Context) error {
		select {
		case <-certsReady:
			return register()
		case <-ctx.Done():
			return nil
		}
	}))
}

// readiness is a readiness check whose real checker is known only once the
// webhooks are registered.
type readiness struct {
	checker atomic.Pointer[healthz.Checker]
}

func (r *readiness) set(c healthz.Checker) { r.checker.Store(&c) }

func (r *readiness) check(req *http.Request) error {
	c := r.checker.Load()
	if c == nil {
		return errors.New("webhook certificates are not ready yet")
	}
	return (*c)(req)
}

// runnableFunc runs on every replica, leader or not: webhooks serve everywhere.
type runnableFunc func(context.Context) error

func (f runnableFunc) Start(ctx context.Context) error { return f(ctx) }
func (runnableFunc) NeedLeaderElection() bool          { return false }

// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// metricsOptions serves the metrics over HTTPS, as Kueue does: a scrape
// must bring a token the API server authenticates (TokenReview) and
// authorizes for get on /metrics (SubjectAccessReview), which the
// metrics-reader ClusterRole grants.
func metricsOptions(bindAddress string, opts Options) metricsserver.Options {
	if opts.InsecureMetrics {
		return metricsserver.Options{BindAddress: bindAddress}
	}
	return metricsserver.Options{
		BindAddress:    bindAddress,
		SecureServing:  true,
		FilterProvider: filters.WithAuthenticationAndAuthorization,
		CertDir:        opts.MetricsCertDir,
	}
}

// localQueueMetricsOf picks the LocalQueues with per-LocalQueue series:
// none unless enabled, then those the selector matches (all without one).
func localQueueMetricsOf(lqm *configapi.LocalQueueMetrics) (func(*kueue.LocalQueue) bool, error) {
	if lqm == nil || !lqm.Enable {
		return nil, nil
	}
	selector := labels.Everything()
	if lqm.LocalQueueSelector != nil {
		var err error
		if selector, err = metav1.LabelSelectorAsSelector(lqm.LocalQueueSelector); err != nil {
			return nil, fmt.Errorf("metrics.localQueueMetrics.localQueueSelector: %w", err)
		}
	}
	return func(lq *kueue.LocalQueue) bool { return selector.Matches(labels.Set(lq.Labels)) }, nil
}

// applyClientConnection sets client throttling. Unset QPS means none: a
// negative QPS turns off client-go's token bucket, so the API server's own
// flow control is the only limit.
func applyClientConnection(c *rest.Config, cc *configapi.ClientConnection) {
	c.QPS = -1
	if cc != nil && cc.QPS != nil {
		c.QPS = *cc.QPS
	}
	if cc != nil && cc.Burst != nil {
		c.Burst = int(*cc.Burst)
	}
}

// fairSharingOf is the scheduler's view of the fairSharing configuration:
// nil when off (absent from the file); both strategies when none is
// listed.
func fairSharingOf(fs *configapi.FairSharing) *scheduler.FairSharing {
	if fs == nil {
		return nil
	}
	out := &scheduler.FairSharing{}
	for _, s := range fs.PreemptionStrategies {
		out.Strategies = append(out.Strategies, scheduler.FairStrategy(s))
	}
	if len(out.Strategies) == 0 {
		out.Strategies = []scheduler.FairStrategy{scheduler.LessThanOrEqualToFinalShare, scheduler.LessThanInitialShare}
	}
	return out
}

// defaultConcurrency are sluice's workers per controller where it keeps
// more than one: the Workload controller and the integrations, which have
// a reconcile per job event. The configuration's groupKindConcurrency
// overrides them, kind by kind.
var defaultConcurrency = map[string]int{
	"Workload.kueue.x-k8s.io": 4, "Job.batch": 4, "Pod": 4,
}

// controllerConfig is controller-runtime's view of controller.*: workers
// per kind (by the kind a controller is for) and the cache sync timeout.
func controllerConfig(c *configapi.ControllerConfigurationSpec, severalPerProcess bool) ctrlconfig.Controller {
	out := ctrlconfig.Controller{SkipNameValidation: ptr.To(severalPerProcess), GroupKindConcurrency: maps.Clone(defaultConcurrency)}
	if c != nil {
		maps.Copy(out.GroupKindConcurrency, c.GroupKindConcurrency)
		if c.CacheSyncTimeout != nil {
			out.CacheSyncTimeout = *c.CacheSyncTimeout
		}
	}
	return out
}

// resourcePolicyOf is how the resources section changes what pods count.
func resourcePolicyOf(r *configapi.Resources) *workload.ResourcePolicy {
	if r == nil || (len(r.ExcludeResourcePrefixes) == 0 && len(r.Transformations) == 0) {
		return nil
	}
	p := &workload.ResourcePolicy{ExcludePrefixes: r.ExcludeResourcePrefixes, Transformations: map[corev1.ResourceName]workload.Transformation{}}
	for _, t := range r.Transformations {
		p.Transformations[t.Input] = workload.Transformation{
			Replace:    t.Strategy != nil && *t.Strategy == configapi.Replace,
			MultiplyBy: t.MultiplyBy,
			Outputs:    t.Outputs,
		}
	}
	return p
}

// DefaultCheckStuckAfter is the manager command's default for
// Options.CheckStuckAfter.
const DefaultCheckStuckAfter = 10 * time.Minute

// podsReadyOf is waitForPodsReady as the controllers act on it; nil (and
// no blocking) when it is off.
func podsReadyOf(w *configapi.WaitForPodsReady) (*controller.PodsReadyPolicy, bool) {
	if w == nil {
		return nil, false
	}
	p := &controller.PodsReadyPolicy{Timeout: w.Timeout.Duration, BackoffBase: 60 * time.Second, BackoffMax: time.Hour}
	if w.RecoveryTimeout != nil {
		p.RecoveryTimeout = w.RecoveryTimeout.Duration
	}
	if rs := w.RequeuingStrategy; rs != nil {
		p.BackoffLimitCount = rs.BackoffLimitCount
		if rs.BackoffBaseSeconds != nil {
			p.BackoffBase = time.Duration(*rs.BackoffBaseSeconds) * time.Second
		}
		if rs.BackoffMaxSeconds != nil {
			p.BackoffMax = time.Duration(*rs.BackoffMaxSeconds) * time.Second
		}
	}
	return p, w.BlockAdmission != nil && *w.BlockAdmission
}

// retentionOf is objectRetentionPolicies.workloads; nil when it keeps
// everything.
func retentionOf(p *configapi.ObjectRetentionPolicies) *controller.Retention {
	if p == nil || p.Workloads == nil || (p.Workloads.AfterFinished == nil && p.Workloads.AfterDeactivatedByKueue == nil) {
		return nil
	}
	out := &controller.Retention{}
	if d := p.Workloads.AfterFinished; d != nil {
		out.AfterFinished = &d.Duration
	}
	if d := p.Workloads.AfterDeactivatedByKueue; d != nil {
		out.AfterDeactivated = &d.Duration
	}
	return out
}

// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch;update;patch

// conversionWebhooks are the CustomResourceDefinitions whose conversion
// webhook (this manager) gets the CA: every kind served in two versions.
func conversionWebhooks() ([]rotator.WebhookInfo, error) {
	crds, err := config.CRDs()
	if err != nil {
		return nil, fmt.Errorf("reading the CustomResourceDefinitions: %w", err)
	}
	var out []rotator.WebhookInfo
	for _, crd := range crds {
		if len(crd.Spec.Versions) > 1 {
			out = append(out, rotator.WebhookInfo{Name: crd.Name, Type: rotator.CRDConversion})
		}
	}
	return out, nil
}
