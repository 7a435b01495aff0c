package bench

import (
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/sluicehq/sluice/config"
	"github.com/sluicehq/sluice/internal/devcluster"
)

// controlPlane is the API server a run measures: its own etcd and
// kube-apiserver, or an existing cluster.
type controlPlane struct {
	restConfig *rest.Config
	// kubeconfig is the file the manager process connects with.
	kubeconfig string
	stop       func() error
}

// startControlPlane starts etcd and kube-apiserver from assets, logging into
// workDir, with sluice's CRDs and no webhooks: the manager runs with
// --webhooks=false, as Kueue's benchmark runs against a bare API server.
func startControlPlane(assets, workDir string) (*controlPlane, error) {
	env, err := devcluster.NewEnvironment(assets)
	if err != nil {
		return nil, err
	}
	env.WebhookInstallOptions = envtest.WebhookInstallOptions{}
	logs, err := os.Create(filepath.Join(workDir, "control-plane.log"))
	if err != nil {
		return nil, fmt.Errorf("creating the control plane's log: %w", err)
	}
	etcdData := filepath.Join(workDir, "etcd")
	if err := os.RemoveAll(etcdData); err != nil { // every run starts from an empty store
		_ = logs.Close()
		return nil, fmt.Errorf("clearing %s: %w", etcdData, err)
	}
	env.ControlPlane.Etcd = &envtest.Etcd{DataDir: etcdData, Out: logs, Err: logs}
	env.ControlPlane.APIServer = &envtest.APIServer{Out: logs, Err: logs}
	restConfig, err := env.Start()
	if err != nil {
		_ = logs.Close()
		return nil, fmt.Errorf("starting etcd and kube-apiserver (log in %s): %w", logs.Name(), err)
	}
	stop := func() error {
		defer logs.Close()
		return env.Stop()
	}
	kubeconfig := filepath.Join(workDir, "kubeconfig")
	if err := devcluster.WriteAdminKubeconfig(env, restConfig, kubeconfig); err != nil {
		_ = stop()
		return nil, err
	}
	return &controlPlane{restConfig: unthrottled(restConfig), kubeconfig: kubeconfig, stop: stop}, nil
}

// connect uses an existing cluster and installs (or updates) sluice's CRDs
// in it.
func connect(kubeconfig string) (*controlPlane, error) {
	restConfig, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading kubeconfig %s: %w", kubeconfig, err)
	}
	crds, err := config.CRDs()
	if err != nil {
		return nil, err
	}
	if _, err := envtest.InstallCRDs(restConfig, envtest.CRDInstallOptions{CRDs: crds}); err != nil {
		return nil, fmt.Errorf("installing sluice's CRDs: %w", err)
	}
	return &controlPlane{restConfig: unthrottled(restConfig), kubeconfig: kubeconfig, stop: func() error { return nil }}, nil
}

// unthrottled drops client-side rate limiting: the bench measures the API
// server, not client-go's default 5 requests per second.
func unthrottled(c *rest.Config) *rest.Config {
	c = rest.CopyConfig(c)
	c.QPS, c.Burst = -1, 0
	return c
}
