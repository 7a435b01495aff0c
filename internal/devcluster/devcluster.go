// Package devcluster runs a whole local cluster for `sluice dev` and the
// end-to-end tests: etcd and kube-apiserver (through envtest),
// kube-controller-manager, kube-scheduler and kwok (simulated nodes and
// kubelets) as child processes from a folder of binaries built by `make
// tools`, with sluice's CRDs, webhooks and manager in it. It owns the
// lifecycle of those processes, the simulated nodes and the sample; it must
// not stand in for an upstream component: the manager it runs is the same
// one `sluice manager` runs.
package devcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	configfile "github.com/sluicehq/sluice/apis/config"
	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/apis/scheme"
	"github.com/sluicehq/sluice/config"
	"github.com/sluicehq/sluice/internal/childproc"
	"github.com/sluicehq/sluice/internal/integration/kinds"
	"github.com/sluicehq/sluice/internal/manager"
)

// ReadyLinePrefix starts the one line `sluice dev` prints once everything
// answers; tests and scripts wait for it.
const ReadyLinePrefix = "sluice dev ready: kubeconfig="

// A dev cluster stops within a bounded time even when its API server is
// gone and every component's last writes fail: the manager gets
// managerGracefulShutdown for its controllers and managerStopTimeout in
// all, each component componentStopGrace before it is killed.
const (
	managerGracefulShutdown = 5 * time.Second
	managerStopTimeout      = 10 * time.Second
	componentStopGrace      = 5 * time.Second
)

// readyTimeout bounds how long start-up may take before giving up.
const readyTimeout = 2 * time.Minute

// Options configure a local cluster.
type Options struct {
	// AssetsDir holds the etcd and kube-apiserver binaries.
	AssetsDir string
	// DataDir holds etcd's data, the logs and the kubeconfig; empty means a
	// temporary folder.
	DataDir string
	// Keep leaves DataDir in place on exit.
	Keep bool
	// KubeconfigOut is where the admin kubeconfig goes; empty means
	// <DataDir>/kubeconfig.
	KubeconfigOut string
	// NoSample skips the sample queues.
	NoSample bool
	// Nodes shape the simulated nodes.
	Nodes NodeOptions
	// Out receives the ready line.
	Out io.Writer
	// NoManager starts no manager: the caller runs its own (the fault
	// drills run `sluice manager` processes), and serves the webhooks at
	// the address Env's webhook options name.
	NoManager bool
	// ControlPlaneMayBeGone ignores errors stopping etcd and kube-apiserver
	// (a drill killed and restarted them).
	ControlPlaneMayBeGone bool
	// ConfigFile, if set, is a manager Configuration file the manager runs
	// with (waitForPodsReady, fair sharing, frameworks...); the local
	// cluster's own wiring (webhook serving, certificates, ports) wins over
	// it. Read before anything starts: a bad file starts nothing.
	ConfigFile string
	// With names other projects' controllers to run next to sluice
	// (jobset, lws, trainer, ray, mpi, appwrapper), from <AssetsDir>/addons (make addons builds them);
	// the integrations that queue their kinds are turned on.
	With []string
	// Workers, when above zero, starts that many worker clusters besides
	// the manager cluster, connected with MultiKueue (see StartMulti).
	Workers int
	// severalManagers: more than one manager runs in this process.
	severalManagers bool
	// ManagerLog, if set, is called with the manager's log file
	// (<data-dir>/logs/manager.log) before anything starts, to point the
	// process's logger at it.
	ManagerLog func(io.Writer)
}

// Cluster is a running local cluster: its control plane, components and
// (unless Options.NoManager) the manager.
type Cluster struct {
	// Env is the control plane; its webhook options say where the
	// webhook configurations point.
	Env        *envtest.Environment
	RestConfig *rest.Config
	Kubeconfig string
	DataDir    string
	LogDir     string

	components  *supervisor
	managerDone chan error
	// undo are what Start did, undone last first by Stop.
	undo []func() error
}

// Run starts the cluster, prints the ready line and blocks until ctx ends
// or a component dies, then stops everything it started, in reverse order.
func Run(ctx context.Context, opts Options) (err error) {
	if opts.Workers > 0 {
		if len(opts.With) > 0 {
			return errors.New("--with and --workers together are not supported yet: MultiKueue does not dispatch the addons' kinds")
		}
		return runMulti(ctx, opts)
	}
	c, err := Start(ctx, opts)
	if err != nil {
		return err
	}
	defer func() {
		if stopErr := c.Stop(); stopErr != nil && err == nil {
			err = stopErr
		}
	}()
	fmt.Fprintf(opts.Out, "%s%s\n", ReadyLinePrefix, c.Kubeconfig)
	return c.Wait(ctx)
}

// Start starts the cluster and returns once it answers: the components
// healthy, the nodes Ready and, with the manager, its webhooks answering and
// the sample's queues active. On error, what was started is stopped.
func Start(ctx context.Context, opts Options) (_ *Cluster, err error) {
	if err := checkAssets(opts.AssetsDir); err != nil {
		return nil, err
	}
	addons, err := parseAddons(opts.With, opts.AssetsDir)
	if err != nil {
		return nil, err
	}
	baseConfig, err := baseManagerConfig(opts.ConfigFile)
	if err != nil {
		return nil, err
	}
	withAddonFrameworks(baseConfig, addons)
	nodes, err := buildNodes(opts.Nodes)
	if err != nil {
		return nil, err
	}
	c := &Cluster{components: &supervisor{}}
	defer func() {
		if err != nil {
			_ = c.Stop()
		}
	}()
	dataDir, cleanup, err := prepareDataDir(opts.DataDir, opts.Keep)
	if err != nil {
		return nil, err
	}
	c.DataDir = dataDir
	c.undo = append(c.undo, func() error { cleanup(); return nil })
	logs, closeLogs, err := openLogs(filepath.Join(dataDir, "logs"))
	if err != nil {
		return nil, err
	}
	c.LogDir = logs.dir
	c.undo = append(c.undo, func() error { closeLogs(); return nil })
	if opts.ManagerLog != nil {
		opts.ManagerLog(logs.manager)
	}

	if c.Env, err = newEnvironment(opts.AssetsDir, dataDir, logs); err != nil {
		return nil, err
	}
	c.Env.CRDInstallOptions.Paths = addonCRDPaths(addons, opts.AssetsDir)
	c.Env.CRDInstallOptions.ErrorIfPathMissing = true
	if c.RestConfig, err = c.Env.Start(); err != nil {
		return nil, fmt.Errorf("starting etcd and kube-apiserver (logs in %s): %w", logs.dir, err)
	}
	c.undo = append(c.undo, func() error {
		if err := c.Env.Stop(); err != nil && !opts.ControlPlaneMayBeGone {
			return fmt.Errorf("stopping the control plane: %w", err)
		}
		return nil
	})

	c.Kubeconfig = opts.KubeconfigOut
	if c.Kubeconfig == "" {
		c.Kubeconfig = filepath.Join(dataDir, "kubeconfig")
	}
	if err := WriteAdminKubeconfig(c.Env, c.RestConfig, c.Kubeconfig); err != nil {
		return nil, err
	}
	caFile := filepath.Join(dataDir, "ca.crt")
	if err := os.WriteFile(caFile, c.RestConfig.CAData, 0o644); err != nil {
		return nil, fmt.Errorf("writing the cluster CA: %w", err)
	}
	files := clusterFiles{assets: opts.AssetsDir, dataDir: dataDir, logDir: logs.dir, kubeconfig: c.Kubeconfig,
		certDir: c.Env.ControlPlane.APIServer.CertDir, caFile: caFile}
	c.undo = append(c.undo, func() error { c.components.stopAll(); return nil })
	for _, spec := range []func(clusterFiles) (componentSpec, error){controllerManagerSpec, schedulerSpec, kwokSpec} {
		s, err := spec(files)
		if err != nil {
			return nil, err
		}
		if err := c.components.start(ctx, s, logs.dir); err != nil {
			return nil, err
		}
	}
	cl, err := client.New(c.RestConfig, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, fmt.Errorf("creating a client: %w", err)
	}
	if err := createNodes(ctx, cl, nodes); err != nil {
		return nil, err
	}
	if err := installUserRoles(ctx, cl); err != nil {
		return nil, err
	}
	if err := c.startAddons(ctx, addons, files, cl); err != nil {
		return nil, err
	}
	if opts.NoManager {
		return c, waitUntilReady(ctx, cl, readiness{nodes: len(nodes)}, c.components.died)
	}

	mgrCtx, stopManager := context.WithCancel(ctx)
	if c.managerDone, err = startManager(mgrCtx, c.Env, c.RestConfig, wireManagerConfig(c.Env, baseConfig), opts.severalManagers); err != nil {
		stopManager()
		return nil, err
	}
	c.undo = append(c.undo, func() error {
		stopManager()
		select {
		case mgrErr := <-c.managerDone:
			return mgrErr
		case <-time.After(managerStopTimeout):
			// A manager whose API server is gone may block on its last
			// writes; the cluster stops anyway.
			fmt.Fprintf(os.Stderr, "the manager did not stop within %s; stopping the cluster anyway\n", managerStopTimeout)
			return nil
		}
	})
	return c, waitUntilReady(ctx, cl, readiness{webhooks: true, sample: !opts.NoSample, nodes: len(nodes)}, c.died)
}

// died names a component (or the manager) that stopped, or returns nil.
func (c *Cluster) died() error {
	select {
	case mgrErr := <-c.managerDone:
		c.managerDone <- mgrErr
		return fmt.Errorf("the manager stopped: %w", mgrErr)
	default:
	}
	return c.components.died()
}

// Wait blocks until ctx ends (nil) or a component, the manager or the API
// server dies (its error).
func (c *Cluster) Wait(ctx context.Context) error {
	apiServer, err := kubernetes.NewForConfig(c.RestConfig)
	if err != nil {
		return fmt.Errorf("creating a clientset: %w", err)
	}
	apiServerDown := watchAPIServer(ctx, apiServer)
	select {
	case <-ctx.Done():
		return nil
	case mgrErr := <-c.managerDone:
		c.managerDone <- mgrErr
		// The manager stops when it loses the API server: name the cause.
		if err := livez(ctx, apiServer); err != nil {
			return fmt.Errorf("kube-apiserver stopped answering /livez: %w (logs in %s); the cluster is stopped", err, c.LogDir)
		}
		return fmt.Errorf("the manager stopped: %w; the cluster is stopped", mgrErr)
	case <-c.components.anyExited():
		return fmt.Errorf("%w; the cluster is stopped", c.components.died())
	case err := <-apiServerDown:
		return fmt.Errorf("%w (logs in %s); the cluster is stopped", err, c.LogDir)
	}
}

// Stop stops everything Start started, last started first, and returns the
// first error.
func (c *Cluster) Stop() error {
	var first error
	for _, undo := range slices.Backward(c.undo) {
		if err := undo(); err != nil && first == nil {
			first = err
		}
	}
	c.undo = nil
	return first
}

// livez asks kube-apiserver whether it (and etcd) is alive.
func livez(ctx context.Context, cs kubernetes.Interface) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err := cs.Discovery().RESTClient().Get().AbsPath("/livez").DoRaw(ctx)
	return err
}

// apiServerStrikes is how many failed liveness checks in a row, two seconds
// apart, mean that kube-apiserver (or the etcd behind it) is gone.
const apiServerStrikes = 3

// watchAPIServer reports when kube-apiserver stops answering /livez (which
// checks etcd too). envtest runs both processes, so their exit is seen
// through the API rather than as a child's.
func watchAPIServer(ctx context.Context, cs kubernetes.Interface) <-chan error {
	down := make(chan error, 1)
	go func() {
		ticker := time.NewTicker(2 * time.Second)
		defer ticker.Stop()
		strikes := 0
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
			err := livez(ctx, cs)
			if err == nil {
				strikes = 0
				continue
			}
			if strikes++; strikes >= apiServerStrikes && ctx.Err() == nil {
				down <- fmt.Errorf("kube-apiserver stopped answering /livez: %w", err)
				return
			}
		}
	}()
	return down
}

func checkAssets(dir string) error {
	for _, name := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("%s not found in --assets %s (run `make tools` to build it): %w", name, dir, err)
		}
	}
	return nil
}

func prepareDataDir(dir string, keep bool) (string, func(), error) {
	if dir == "" {
		tmp, err := os.MkdirTemp("", "sluice-dev-")
		if err != nil {
			return "", nil, fmt.Errorf("creating a data folder: %w", err)
		}
		dir = tmp
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, fmt.Errorf("creating --data-dir %s: %w", dir, err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", nil, err
	}
	cleanup := func() {
		if !keep {
			_ = os.RemoveAll(abs)
		}
	}
	return abs, cleanup, nil
}

// NewEnvironment describes a control plane from the binaries in assets, with
// sluice's CRDs and webhook configurations to install. Tests start
// the same environment as `sluice dev`.
func NewEnvironment(assets string) (*envtest.Environment, error) {
	crds, err := config.CRDs()
	if err != nil {
		return nil, err
	}
	validating, err := config.ValidatingWebhooks()
	if err != nil {
		return nil, err
	}
	mutating, err := config.MutatingWebhooks()
	if err != nil {
		return nil, err
	}
	return &envtest.Environment{
		BinaryAssetsDirectory: assets,
		// With the scheme, envtest points the CRDs' conversion webhook
		// (v1beta1 <-> v1beta2) at the manager's local webhook server.
		CRDInstallOptions: envtest.CRDInstallOptions{CRDs: crds, Scheme: scheme.Scheme},
		WebhookInstallOptions: envtest.WebhookInstallOptions{
			ValidatingWebhooks: validating, MutatingWebhooks: mutating,
		},
		ControlPlaneStartTimeout: time.Minute,
		ControlPlaneStopTimeout:  30 * time.Second,
	}, nil
}

func newEnvironment(assets, dataDir string, logs *logFiles) (*envtest.Environment, error) {
	env, err := NewEnvironment(assets)
	if err != nil {
		return nil, err
	}
	env.ControlPlane.Etcd = &envtest.Etcd{DataDir: filepath.Join(dataDir, "etcd"), Out: logs.etcd, Err: logs.etcd}
	env.ControlPlane.APIServer = &envtest.APIServer{Out: logs.apiserver, Err: logs.apiserver}
	if err := EnableAggregation(env, filepath.Join(dataDir, "front-proxy")); err != nil {
		return nil, err
	}
	return env, nil
}

// ManagerConfig is the configuration of a manager running next to env: its
// webhooks serve on the address and certificates envtest registered, it
// opens no metrics or probe ports, and it queues batch Jobs, plain Pods,
// and Deployments and StatefulSets (through their Pods).
func ManagerConfig(env *envtest.Environment) *configapi.Configuration {
	cfg, _ := baseManagerConfig("") // the defaults can't fail to load
	return wireManagerConfig(env, cfg)
}

// baseManagerConfig is the configuration the local manager starts from:
// the defaults with the local cluster's frameworks, or a user's file (its
// frameworks kept when it names any).
func baseManagerConfig(path string) (*configapi.Configuration, error) {
	frameworks := kinds.BuiltIn()
	file := configfile.Default()
	if path != "" {
		var err error
		if file, err = configfile.Load(path); err != nil {
			return nil, fmt.Errorf("the manager's configuration: %w", err)
		}
	}
	cfg := file.Config
	if path == "" || file.Written.Integrations == nil || len(file.Written.Integrations.Frameworks) == 0 {
		cfg.Integrations.Frameworks = frameworks
	}
	return cfg, nil
}

// wireManagerConfig points a configuration at the local cluster's webhook
// serving and keeps the manager off shared ports.
func wireManagerConfig(env *envtest.Environment, cfg *configapi.Configuration) *configapi.Configuration {
	cfg.InternalCertManagement.Enable = ptr.To(false)
	cfg.Webhook.Host = env.WebhookInstallOptions.LocalServingHost
	cfg.Webhook.Port = ptr.To(env.WebhookInstallOptions.LocalServingPort)
	cfg.Webhook.CertDir = env.WebhookInstallOptions.LocalServingCertDir
	cfg.Metrics.BindAddress = "0"
	cfg.Health.HealthProbeBindAddress = "0"
	// The visibility server on a port of its own, on loopback: several
	// managers may run on one machine.
	cfg.VisibilityServer.BindAddress = ptr.To("127.0.0.1")
	if addr, err := childproc.FreeLocalAddress(); err == nil {
		_, port := splitHostPort(addr)
		if p, err := strconv.Atoi(port); err == nil {
			cfg.VisibilityServer.BindPort = ptr.To(int32(p))
		}
	}
	return cfg
}

// WriteAdminKubeconfig writes to path a kubeconfig of a cluster admin of
// env, for kubectl and for processes started next to it.
func WriteAdminKubeconfig(env *envtest.Environment, restConfig *rest.Config, path string) error {
	admin, err := env.AddUser(envtest.User{Name: "sluice-admin", Groups: []string{"system:masters"}}, restConfig)
	if err != nil {
		return fmt.Errorf("creating the admin user: %w", err)
	}
	kubeconfig, err := admin.KubeConfig()
	if err != nil {
		return fmt.Errorf("rendering the admin kubeconfig: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("creating the kubeconfig folder: %w", err)
	}
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		return fmt.Errorf("writing the kubeconfig: %w", err)
	}
	return nil
}

// startManager runs the manager in-process, serving its webhooks with the
// certificates envtest registered in the webhook configuration.
func startManager(ctx context.Context, env *envtest.Environment, restConfig *rest.Config, cfg *configapi.Configuration, several bool) (chan error, error) {
	c, err := client.New(restConfig, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, fmt.Errorf("creating a client: %w", err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: *cfg.Namespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating namespace %s: %w", ns.Name, err)
	}
	if err := RegisterLocalVisibility(ctx, c, *cfg.Namespace, *cfg.VisibilityServer.BindPort); err != nil {
		return nil, err
	}
	grace := managerGracefulShutdown
	mgr, err := manager.New(ctx, restConfig, cfg, manager.Options{EnableWebhooks: true, GracefulShutdownTimeout: &grace,
		CheckStuckAfter: manager.DefaultCheckStuckAfter, SeveralPerProcess: several})
	if err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return done, nil
}

// readiness is what waitUntilReady waits for.
type readiness struct {
	webhooks, sample bool
	nodes            int
}

// waitUntilReady returns once the manager's webhooks and controllers answer
// and the simulated nodes are Ready: the sample goes through the webhooks,
// and its ClusterQueues turn Active through the controllers. Without the
// sample, a dry-run create of an invalid object must come back rejected by
// the webhook. died reports a component that stopped meanwhile.
func waitUntilReady(ctx context.Context, c client.Client, want readiness, died func() error) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	poll := func(what string, cond wait.ConditionWithContextFunc) error {
		err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			if err := died(); err != nil {
				return false, err
			}
			return cond(ctx)
		})
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		return nil
	}
	if want.webhooks {
		if err := poll("the webhooks", func(ctx context.Context) (bool, error) {
			return webhookRejects(ctx, c), nil
		}); err != nil {
			return err
		}
	}
	if err := poll(fmt.Sprintf("%d simulated nodes to be Ready", want.nodes), func(ctx context.Context) (bool, error) {
		return nodesReady(ctx, c, want.nodes)
	}); err != nil {
		return err
	}
	if !want.sample {
		return nil
	}
	objs, err := config.SampleQueues()
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("applying sample %T %s: %w", obj, obj.GetName(), err)
		}
	}
	return poll("the sample ClusterQueues to be active", func(ctx context.Context) (bool, error) {
		for _, obj := range objs {
			if cq, ok := obj.(*kueue.ClusterQueue); ok {
				current := &kueue.ClusterQueue{}
				if err := c.Get(ctx, client.ObjectKeyFromObject(cq), current); err != nil {
					return false, nil
				}
				if !meta.IsStatusConditionTrue(current.Status.Conditions, kueue.ConditionActive) {
					return false, nil
				}
			}
		}
		return true, nil
	})
}

// webhookRejects tells whether the validating webhook answers, by asking it
// to validate (dry run) a LocalQueue whose clusterQueue only the webhook
// rejects.
func webhookRejects(ctx context.Context, c client.Client) bool {
	probe := &kueue.LocalQueue{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: "sluice-dev-readiness-probe"},
		Spec:       kueue.LocalQueueSpec{ClusterQueue: "Not_A_Valid_Name"},
	}
	err := c.Create(ctx, probe, client.DryRunAll)
	var status apierrors.APIStatus
	return apierrors.IsInvalid(err) && errors.As(err, &status) &&
		len(status.Status().Details.Causes) > 0 && status.Status().Details.Causes[0].Field == "spec.clusterQueue"
}
