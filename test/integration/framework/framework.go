// Package framework starts what integration suites run against: a real etcd
// and kube-apiserver (envtest, binaries from `make tools`), sluice's CRDs and
// webhook configuration, and the sluice manager in-process with its webhooks
// and controllers. It also holds the polling helpers the suites share. It
// must not hold assertions about sluice's behaviour: those belong to suites.
package framework

import (
	"context"
	"fmt"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr"
	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	"github.com/sluicehq/sluice/apis/scheme"
	"github.com/sluicehq/sluice/internal/devcluster"
	"github.com/sluicehq/sluice/internal/manager"
)

// klogOnce sets klog's logger once per test process.
var klogOnce sync.Once

// Cluster is a running control plane with sluice's API installed.
type Cluster struct {
	Env        *envtest.Environment
	RestConfig *rest.Config
	// Client talks to the API server directly (no cache), as a user would.
	Client client.Client
	// names numbers the objects Unique names.
	names atomic.Int32
	// frontProxyDir holds the aggregation layer's certificates.
	frontProxyDir string
}

// StartCluster starts etcd and kube-apiserver and installs the CRDs and the
// validating webhook configuration.
func StartCluster() (*Cluster, error) { return startCluster(true, nil) }

// StartClusterWithoutWebhooks installs the CRDs only, for managers that run
// with --webhooks=false.
func StartClusterWithoutWebhooks() (*Cluster, error) { return startCluster(false, nil) }

// StartClusterFrom starts a control plane with these CRDs instead of
// sluice's (a cluster that ran another version, or Kueue) and no webhook
// configurations; the manager's webhook server still has envtest's
// serving address and certificates.
func StartClusterFrom(crds []*apiextensionsv1.CustomResourceDefinition) (*Cluster, error) {
	return startCluster(false, crds)
}

// StartEmptyCluster starts a control plane without sluice in it (no CRDs,
// no webhook configurations), for tests that install sluice as a user
// would.
func StartEmptyCluster() (*Cluster, error) {
	return startCluster(false, []*apiextensionsv1.CustomResourceDefinition{})
}

func startCluster(webhooks bool, crds []*apiextensionsv1.CustomResourceDefinition) (*Cluster, error) {
	ctrl.SetLogger(testLogger())
	// client-go and the visibility server (k8s.io/apiserver) log through
	// klog: the same logger, so that tests stay quiet. Once per process:
	// klog's logger is read unguarded by goroutines a stopped manager of an
	// earlier test may leave behind.
	klogOnce.Do(func() { klog.SetLogger(testLogger()) })
	assets, err := AssetsDir()
	if err != nil {
		return nil, err
	}
	env, err := devcluster.NewEnvironment(assets)
	if err != nil {
		return nil, err
	}
	if !webhooks {
		env.WebhookInstallOptions = envtest.WebhookInstallOptions{}
	}
	frontProxy, err := os.MkdirTemp("", "sluice-front-proxy-")
	if err != nil {
		return nil, err
	}
	if err := devcluster.EnableAggregation(env, frontProxy); err != nil {
		return nil, err
	}
	if crds != nil {
		env.CRDInstallOptions = envtest.CRDInstallOptions{CRDs: crds}
	}
	restConfig, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting the control plane from %s: %w", assets, err)
	}
	// Tests drive the API server hard; client-go's default throttling (5
	// requests/s) would make them measure the client, not sluice.
	userConfig := rest.CopyConfig(restConfig)
	userConfig.QPS = -1
	c, err := client.New(userConfig, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	return &Cluster{Env: env, RestConfig: restConfig, Client: c, frontProxyDir: frontProxy}, nil
}

// Stop stops the control plane.
func (c *Cluster) Stop() error {
	defer func() { _ = os.RemoveAll(c.frontProxyDir) }()
	return c.Env.Stop()
}

// ManagerConfig is the configuration a test manager runs with: the one
// `sluice dev` uses, without leader election unless a test asks for it.
func (c *Cluster) ManagerConfig() *configapi.Configuration {
	cfg := devcluster.ManagerConfig(c.Env)
	cfg.LeaderElection.LeaderElect = ptr.To(false)
	return cfg
}

// StartManager runs a sluice manager until the returned stop function is
// called; stop waits for it to exit and reports its error.
func (c *Cluster) StartManager(cfg *configapi.Configuration, opts manager.Options) (stop func() error, err error) {
	return c.StartManagerAs(c.RestConfig, cfg, opts)
}

// StartManagerAs is StartManager with the manager's credentials given, such
// as an impersonated service account bound to the generated role.
func (c *Cluster) StartManagerAs(restConfig *rest.Config, cfg *configapi.Configuration, opts manager.Options) (stop func() error, err error) {
	ctx, cancel := context.WithCancel(context.Background())
	mgr, err := manager.New(ctx, restConfig, cfg, opts)
	if err != nil {
		cancel()
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return func() error {
		cancel()
		return <-done
	}, nil
}

// AssetsDir is where the etcd and kube-apiserver binaries are:
// $KUBEBUILDER_ASSETS, or bin/k8s at the repository root.
func AssetsDir() (string, error) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		root, err := RepoRoot()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(root, "bin", "k8s")
	}
	for _, name := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return "", fmt.Errorf("%s missing in %s: run `make tools` (or `make test`, which builds it): %w", name, dir, err)
		}
	}
	return dir, nil
}

// RepoRoot finds the folder of the repository's go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "hack", "tools", "go.mod")); err == nil {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no repository root above the working directory")
		}
		dir = parent
	}
}

// testLogger logs errors only, unless SLUICE_TEST_LOG=1 asks for everything.
func testLogger() logr.Logger {
	if os.Getenv("SLUICE_TEST_LOG") == "1" {
		return zap.New(zap.UseDevMode(true))
	}
	return zap.New(zap.Level(zapcore.ErrorLevel))
}

// RunSuite is the body of a suite's TestMain: a cluster and a manager for the
// whole test binary.
func RunSuite(m interface{ Run() int }, cluster **Cluster, opts manager.Options) int {
	return RunSuiteWith(m, cluster, opts, nil)
}

// RunSuiteWith is RunSuite with the manager's configuration changed by
// configure first.
func RunSuiteWith(m interface{ Run() int }, cluster **Cluster, opts manager.Options, configure func(*configapi.Configuration)) int {
	return RunSuitePrepared(m, cluster, opts, nil, configure)
}

// RunSuitePrepared is RunSuiteWith with prepare (nil: none) run on the
// cluster before the manager starts (a CRD the manager looks for at
// startup, say).
func RunSuitePrepared(m interface{ Run() int }, cluster **Cluster, opts manager.Options, prepare func(*Cluster) error,
	configure func(*configapi.Configuration)) int {
	c, err := StartCluster()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the cluster:", err)
		return 1
	}
	defer func() {
		if err := c.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the cluster:", err)
		}
	}()
	if prepare != nil {
		if err := prepare(c); err != nil {
			fmt.Fprintln(os.Stderr, "preparing the cluster:", err)
			return 1
		}
	}
	cfg := c.ManagerConfig()
	if configure != nil {
		configure(cfg)
	}
	stop, err := c.StartManager(cfg, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the manager:", err)
		return 1
	}
	defer func() {
		if err := stop(); err != nil {
			fmt.Fprintln(os.Stderr, "the manager failed:", err)
		}
	}()
	*cluster = c
	return m.Run()
}

// WriteAdminKubeconfig writes a kubeconfig of a cluster admin to path.
func (c *Cluster) WriteAdminKubeconfig(path string) error {
	return devcluster.WriteAdminKubeconfig(c.Env, c.RestConfig, path)
}

// BuildSluice builds the sluice binary into dir and returns its path.
func BuildSluice(dir string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "sluice")
	build := exec.Command("go", "build", "-o", bin, "./cmd/sluice")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building sluice: %w\n%s", err, out)
	}
	return bin, nil
}

// BinaryAndAssets is what a suite running the real binary needs: the
// control-plane assets, and sluice built into a new temporary folder (dir,
// which the caller removes).
func BinaryAndAssets(prefix string) (assets, dir, bin string, err error) {
	if assets, err = AssetsDir(); err != nil {
		return "", "", "", err
	}
	if dir, err = os.MkdirTemp("", prefix); err != nil {
		return "", "", "", err
	}
	if bin, err = BuildSluice(dir); err != nil {
		_ = os.RemoveAll(dir)
		return "", "", "", err
	}
	return assets, dir, bin, nil
}

// Unique makes a name no other object of the suite has.
func (c *Cluster) Unique(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, c.names.Add(1))
}

// MustCreate creates the objects as a user would, failing the test on any
// error.
func (c *Cluster) MustCreate(t testing.TB, objs ...client.Object) {
	t.Helper()
	for _, obj := range objs {
		if err := c.Client.Create(context.Background(), obj); err != nil {
			t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
		}
	}
}

// TryUpdate applies mutate to the latest version of obj and writes it once,
// returning the API server's answer (for tests that expect a refusal).
func (c *Cluster) TryUpdate(obj client.Object, mutate func()) error {
	if err := c.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		return err
	}
	mutate()
	return c.Client.Update(context.Background(), obj)
}

// warningRecorder keeps the admission warnings a client was given.
type warningRecorder struct {
	mu       sync.Mutex
	warnings []string
}

func (r *warningRecorder) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.warnings = append(r.warnings, text)
}

// CreateWithWarnings creates obj and returns the warnings of the request.
func (c *Cluster) CreateWithWarnings(t testing.TB, obj client.Object) []string {
	t.Helper()
	rec := &warningRecorder{}
	config := rest.CopyConfig(c.RestConfig)
	config.WarningHandlerWithContext = rec
	warned, err := client.New(config, client.Options{Scheme: c.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	if err := warned.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %s: %v", obj.GetName(), err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return slices.Clone(rec.warnings)
}

// TenantClient is a client that acts as a tenant: a user other than the
// manager (which runs as the cluster's admin here), with every right. What
// sluice allows only itself (taking a Pod's admission gate off) is refused
// to it.
func (c *Cluster) TenantClient(t testing.TB) client.Client {
	t.Helper()
	config := rest.CopyConfig(c.RestConfig)
	config.Impersonate = rest.ImpersonationConfig{UserName: "tenant", Groups: []string{"system:masters"}}
	tenant, err := client.New(config, client.Options{Scheme: c.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return tenant
}
