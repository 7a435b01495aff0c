//go:build drills

package drills

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	"github.com/sluicehq/sluice/apis/scheme"
	"github.com/sluicehq/sluice/internal/childproc"
	"github.com/sluicehq/sluice/internal/devcluster"
)

// drillCluster is one drill's world: a local cluster (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, kwok nodes) with no manager in
// it, the webhook proxy where its webhook configurations point, and the
// `sluice manager` processes the drill starts, each behind its own API
// proxy.
type drillCluster struct {
	t        *testing.T
	ctx      context.Context
	dir      string
	dev      *devcluster.Cluster
	client   client.Client
	webhooks *webhookProxy
	managers []*managerProc
	// restarted are control-plane processes the drill killed and started
	// again; they are stopped before the cluster.
	restarted []*exec.Cmd
}

// managerProc is one `sluice manager` replica: its process, started
// again when it exits, as a Deployment's would be (a manager that loses
// its lease exits).
type managerProc struct {
	name       string
	args       []string
	logDir     string
	api        *apiProxy
	metricsURL string
	readyzURL  string

	mu       sync.Mutex
	proc     *childproc.Process
	stopped  bool
	restarts int
}

// lease timings of the drills' managers: short, so that a takeover fits in
// a drill, in the same proportions as Kueue's defaults (15s, 10s, 2s).
const (
	leaseDuration = 6 * time.Second
	renewDeadline = 4 * time.Second
	retryPeriod   = 1 * time.Second
)

func startDrillCluster(t *testing.T) *drillCluster {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	dir := t.TempDir()
	dev, err := devcluster.Start(ctx, devcluster.Options{AssetsDir: assetsDir, DataDir: filepath.Join(dir, "cluster"), Keep: true,
		NoManager: true, ControlPlaneMayBeGone: true, Nodes: devcluster.NodeOptions{Count: 4, CPU: "32", Memory: "128Gi", Pods: "110", FlavorLabels: "instance-type=on-demand"}})
	if err != nil {
		cancel()
		t.Fatalf("starting the cluster: %v", err)
	}
	c, err := client.New(dev.RestConfig, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	wio := dev.Env.WebhookInstallOptions
	webhooks, err := startWebhookProxy(ctx, fmt.Sprintf("%s:%d", wio.LocalServingHost, wio.LocalServingPort))
	if err != nil {
		t.Fatalf("listening where the webhooks point: %v", err)
	}
	d := &drillCluster{t: t, ctx: ctx, dir: dir, dev: dev, client: c, webhooks: webhooks}
	t.Cleanup(func() {
		for _, m := range d.managers {
			m.stop()
		}
		webhooks.close()
		for _, cmd := range d.restarted {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		cancel()
		if err := dev.Stop(); err != nil {
			t.Logf("stopping the cluster: %v", err)
		}
		if t.Failed() {
			t.Logf("logs kept in %s", dir)
			keepLogs(t, dir)
		}
	})
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: configapi.DefaultNamespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return d
}

// keepLogs copies the drill's logs out of the test's temporary folder,
// which the test framework removes.
func keepLogs(t *testing.T, dir string) {
	dest := filepath.Join(os.TempDir(), "sluice-drill-logs", t.Name())
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return
	}
	_ = exec.Command("cp", "-r", dir+"/.", dest).Run()
	t.Logf("logs copied to %s", dest)
}

// startManager starts a `sluice manager` with leader election, behind its
// own API proxy, serving webhooks on its own port (the webhook proxy routes
// to it once ready).
func (d *drillCluster) startManager(name string) *managerProc {
	d.t.Helper()
	api, err := startAPIProxy(name, d.dev.RestConfig)
	if err != nil {
		d.t.Fatal(err)
	}
	d.t.Cleanup(api.close)
	kubeconfig := filepath.Join(d.dir, name+".kubeconfig")
	if err := writeProxyKubeconfig(api.URL(), kubeconfig); err != nil {
		d.t.Fatal(err)
	}
	webhookAddr, err := childproc.FreeLocalAddress()
	if err != nil {
		d.t.Fatal(err)
	}
	metricsAddr, err := childproc.FreeLocalAddress()
	if err != nil {
		d.t.Fatal(err)
	}
	healthAddr, err := childproc.FreeLocalAddress()
	if err != nil {
		d.t.Fatal(err)
	}
	cfg := devcluster.ManagerConfig(d.dev.Env)
	host, port := splitHostPort(webhookAddr)
	cfg.Webhook.Host = host
	cfg.Webhook.Port = &port
	cfg.Metrics.BindAddress = metricsAddr
	cfg.Health.HealthProbeBindAddress = healthAddr
	le := cfg.LeaderElection
	le.LeaseDuration = &metav1.Duration{Duration: leaseDuration}
	le.RenewDeadline = &metav1.Duration{Duration: renewDeadline}
	le.RetryPeriod = &metav1.Duration{Duration: retryPeriod}
	cfgFile := filepath.Join(d.dir, name+".yaml")
	data, err := yaml.Marshal(cfg)
	if err != nil {
		d.t.Fatal(err)
	}
	if err := os.WriteFile(cfgFile, data, 0o644); err != nil {
		d.t.Fatal(err)
	}
	args := []string{"manager", "--config", cfgFile, "--kubeconfig", kubeconfig, "--internal-cert-management=false", "--metrics-secure=false"}
	// To look inside a drill's manager, e.g. the soak's heap:
	// SLUICE_DRILL_MANAGER_ARGS=--pprof-bind-address=127.0.0.1:6060
	// (one address: for the drills that start one manager).
	args = append(args, strings.Fields(os.Getenv("SLUICE_DRILL_MANAGER_ARGS"))...)
	proc, err := childproc.Start(name, sluiceBin, args, filepath.Join(d.dir, name+".log"))
	if err != nil {
		d.t.Fatal(err)
	}
	m := &managerProc{name: name, args: args, logDir: d.dir, proc: proc, api: api,
		metricsURL: "http://" + metricsAddr + "/metrics", readyzURL: "http://" + healthAddr + "/readyz"}
	if err := proc.WaitHealthy(d.ctx, m.readyzURL, time.Minute); err != nil {
		d.t.Fatalf("starting %s: %v", name, err)
	}
	go m.supervise(d.ctx)
	d.webhooks.add(webhookAddr, m.readyzURL)
	d.eventually(name+"'s webhooks to be routed to", time.Minute, func(context.Context) (bool, error) {
		return d.webhooks.isReady(webhookAddr), nil
	})
	d.managers = append(d.managers, m)
	return m
}

// current is the manager's process now.
func (m *managerProc) current() *childproc.Process {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.proc
}

// supervise starts the manager again a second after it exits, until stop.
func (m *managerProc) supervise(ctx context.Context) {
	for {
		p := m.current()
		select {
		case <-ctx.Done():
			return
		case <-p.Exited():
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second): // a restart backoff, as the kubelet's
		}
		m.mu.Lock()
		if m.stopped {
			m.mu.Unlock()
			return
		}
		m.restarts++
		next, err := childproc.Start(m.name, sluiceBin, m.args, filepath.Join(m.logDir, fmt.Sprintf("%s-%d.log", m.name, m.restarts)))
		if err == nil {
			m.proc = next
		}
		m.mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (m *managerProc) stop() {
	m.mu.Lock()
	m.stopped = true
	p := m.proc
	m.mu.Unlock()
	p.Stop(10 * time.Second)
}

// signal sends a signal to the manager's process now.
func (m *managerProc) signal(sig syscall.Signal) error { return m.current().Signal(sig) }

func splitHostPort(addr string) (string, int) {
	i := strings.LastIndex(addr, ":")
	port, _ := strconv.Atoi(addr[i+1:])
	return addr[:i], port
}

// writeProxyKubeconfig points a manager at its API proxy (plain HTTP, no
// credentials: the proxy is the admin).
func writeProxyKubeconfig(server, path string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["drill"] = &clientcmdapi.Cluster{Server: server}
	cfg.AuthInfos["drill"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["drill"] = &clientcmdapi.Context{Cluster: "drill", AuthInfo: "drill"}
	cfg.CurrentContext = "drill"
	return clientcmd.WriteToFile(*cfg, path)
}

// leader is the manager whose lease renewals land now (the managers share
// a host name, so the Lease's holder does not tell them apart), or nil.
func (d *drillCluster) leader() *managerProc {
	recent := time.Now().Add(-2 * retryPeriod)
	for _, m := range d.managers {
		ws := m.api.writesOf()
		for i := len(ws) - 1; i >= 0 && ws[i].at.After(recent); i-- {
			if ws[i].resource == "leases" && ws[i].landed() {
				return m
			}
		}
	}
	return nil
}

// metric reads one unlabelled sample (or the sum of a labelled family) from
// a manager's metrics endpoint.
func (m *managerProc) metric(ctx context.Context, name string) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.metricsURL, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sum, found := 0.0, false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) || (len(line) > len(name) && line[len(name)] != ' ' && line[len(name)] != '{') {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err == nil {
			sum, found = sum+v, true
		}
	}
	if !found {
		return 0, fmt.Errorf("metric %s not found", name)
	}
	return sum, nil
}

// adminConfig is the cluster admin's REST configuration.
func (d *drillCluster) adminConfig() *rest.Config { return rest.CopyConfig(d.dev.RestConfig) }
