package devcluster

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	"github.com/sluicehq/sluice/apis/scheme"
	"github.com/sluicehq/sluice/internal/childproc"
	"github.com/sluicehq/sluice/internal/integration/kinds"
)

// An addon is another project's controller that `sluice dev --with` runs
// next to sluice as a process of its own, from <assets>/addons/<name>/,
// where `make addons` puts what it builds from the project's published
// module: the controller, the project's CRDs (crds/*.yaml) and its webhook
// configurations rendered from the project's own kustomization
// (webhooks.yaml). sluice dev serves the addon's webhooks with the
// certificates it serves sluice's with, and turns on the sluice
// integrations that queue the addon's kinds.
type addon struct {
	name string
	// groups are the API groups of the addon's kinds: the integrations of
	// the registered kinds in them queue those (kinds.OfGroups).
	groups []string
	// configAPIVersion is the apiVersion of the controller's
	// Configuration file (the projects follow the kubebuilder layout).
	// Empty when flags configure the controller instead.
	configAPIVersion string
	// flags, for a controller configured by flags, are its command line
	// (kubeconfig: the local cluster's; probe: a free address for its
	// health checks) and the URL that answers when it is healthy.
	flags func(kubeconfig, probe string) (args []string, health string)
	// certManagementField is the Configuration field that turns the
	// controller's own certificate management off.
	certManagementField string
	// needs are the addons whose kinds the addon's controller creates (the
	// trainer runs TrainJobs as JobSets).
	needs []string
	// certsFromTempDir: the controller has no setting for its webhook
	// certificate folder (the trainer's, the AppWrapper controller's); it
	// reads controller-runtime's default, under its TMPDIR.
	certsFromTempDir bool
	// noWebhooks: the controller runs without webhooks of its own
	// (KubeRay's RayCluster webhook is optional and only validates), and
	// make addons renders none.
	noWebhooks bool
	// fixedPort, when set, is a port the controller listens on whatever
	// its flags say, on every interface.
	fixedPort int
	// env are variables the controller reads its settings from.
	env []string
	// prepare, when set, writes the configuration the controller reads
	// from the cluster before it starts (probe: its health address).
	prepare func(ctx context.Context, cl client.Client, probe string) error
}

// knownAddons are what --with takes.
var knownAddons = []addon{
	{name: "jobset", groups: []string{"jobset.x-k8s.io"}, configAPIVersion: "config.jobset.x-k8s.io/v1alpha1", certManagementField: "internalCertManagement"},
	{name: "lws", groups: []string{"leaderworkerset.x-k8s.io"}, configAPIVersion: "config.lws.x-k8s.io/v1alpha1", certManagementField: "internalCertManagement"},
	{name: "trainer", groups: []string{"trainer.kubeflow.org"}, configAPIVersion: "config.trainer.kubeflow.org/v1alpha1", certManagementField: "certManagement",
		needs: []string{"jobset"}, certsFromTempDir: true},
	{name: "ray", groups: []string{"ray.io"},
		flags: kubeRayFlags, noWebhooks: true},
	{name: "mpi", groups: []string{"kubeflow.org"}, flags: mpiOperatorFlags, noWebhooks: true, fixedPort: mpiOperatorHealthPort},
	{name: "appwrapper", groups: []string{"workload.codeflare.dev"}, flags: appWrapperFlags, noWebhooks: true,
		env: []string{"NAMESPACE=" + appWrapperConfigNamespace}, prepare: appWrapperConfig,
		// Its webhook server starts with no webhook (its readiness waits
		// for it), on a fixed port, with certificates from TMPDIR.
		certsFromTempDir: true, fixedPort: appWrapperWebhookPort},
}

// kubeRayFlags: the settings a Configuration file gives the others (no
// leader election, no metrics, health on the probe address).
func kubeRayFlags(kubeconfig, probe string) ([]string, string) {
	return []string{"--kubeconfig=" + kubeconfig, "--enable-leader-election=false", "--metrics-addr=0",
		"--health-probe-bind-address=" + probe, "--log-stdout-encoder=console"}, "http://" + probe + "/readyz"
}

// mpiOperatorHealthPort is where the MPI operator answers health checks:
// the port is fixed, so one local cluster at a time on a machine can run
// it.
const mpiOperatorHealthPort = 8080

var mpiOperatorHealth = "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(mpiOperatorHealthPort)) + "/healthz"

// mpiOperatorFlags: the MPI operator always elects a leader, in the lock
// namespace, which must exist (its default, mpi-operator, does not here).
func mpiOperatorFlags(kubeconfig, _ string) ([]string, string) {
	return []string{"--kubeConfig=" + kubeconfig, "--lock-namespace=default"}, mpiOperatorHealth
}

func addonNames() string {
	names := make([]string, 0, len(knownAddons))
	for _, a := range knownAddons {
		names = append(names, a.name)
	}
	return strings.Join(names, ", ")
}

// parseAddons resolves --with: each name known and built in assets. A name
// given twice is one addon.
func parseAddons(names []string, assets string) ([]addon, error) {
	var out []addon
	for _, name := range names {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		i := slices.IndexFunc(knownAddons, func(a addon) bool { return a.name == name })
		if i < 0 {
			return nil, fmt.Errorf("--with: unknown controller %q (known: %s)", name, addonNames())
		}
		a := knownAddons[i]
		if slices.ContainsFunc(out, func(o addon) bool { return o.name == name }) {
			continue
		}
		for _, file := range a.builtFiles(assets) {
			if _, err := os.Stat(file); err != nil {
				return nil, fmt.Errorf("--with %s: %s not found (`make dev DEV_WITH=%s` builds it, or `make addons` all of them): %w", name, file, name, err)
			}
		}
		out = append(out, a)
	}
	for _, a := range out {
		for _, need := range a.needs {
			if !slices.ContainsFunc(out, func(o addon) bool { return o.name == need }) {
				return nil, fmt.Errorf("--with %s needs %s too: its controller creates %s's kind", a.name, need, need)
			}
		}
	}
	return out, nil
}

func (a addon) dir(assets string) string    { return filepath.Join(assets, "addons", a.name) }
func (a addon) binary(assets string) string { return filepath.Join(a.dir(assets), "controller") }
func (a addon) webhooksFile(assets string) string {
	return filepath.Join(a.dir(assets), "webhooks.yaml")
}
func (a addon) crdDir(assets string) string { return filepath.Join(a.dir(assets), "crds") }

// builtFiles are what make addons puts in assets for the addon.
func (a addon) builtFiles(assets string) []string {
	if a.noWebhooks {
		return []string{a.binary(assets), a.crdDir(assets)}
	}
	return []string{a.binary(assets), a.webhooksFile(assets), a.crdDir(assets)}
}

// componentName names the addon's process and its log file.
func (a addon) componentName() string { return a.name + "-controller" }

// addonServing is where an addon serves its webhooks: the local cluster's
// webhook host and certificates, on a port of its own.
type addonServing struct {
	host, externalHost string
	port               int
	certDir            string
	caData             []byte
}

func newAddonServing(opts envtest.WebhookInstallOptions) (addonServing, error) {
	addr, err := childproc.FreeLocalAddress()
	if err != nil {
		return addonServing{}, err
	}
	_, portText := splitHostPort(addr)
	port, err := strconv.Atoi(portText)
	if err != nil {
		return addonServing{}, fmt.Errorf("parsing the port of %s: %w", addr, err)
	}
	external := opts.LocalServingHostExternalName
	if external == "" {
		external = opts.LocalServingHost
	}
	return addonServing{host: opts.LocalServingHost, externalHost: external, port: port,
		certDir: opts.LocalServingCertDir, caData: opts.LocalServingCAData}, nil
}

func (s addonServing) url(path string) string {
	return "https://" + net.JoinHostPort(s.externalHost, strconv.Itoa(s.port)) + path
}

// addonSpec writes the addon controller's Configuration (no leader
// election, no certificate management of its own, no metrics port, the
// webhook serving above, health on a free port) and says how to run it.
func addonSpec(a addon, f clusterFiles, serving addonServing, probe string) (componentSpec, error) {
	if a.flags != nil {
		return flagConfiguredSpec(a, f, serving, probe)
	}
	webhook := map[string]any{"host": serving.host, "port": serving.port, "certDir": serving.certDir}
	cfg := map[string]any{
		"apiVersion":          a.configAPIVersion,
		"kind":                "Configuration",
		"leaderElection":      map[string]any{"leaderElect": false},
		a.certManagementField: map[string]any{"enable": false},
		"webhook":             webhook,
		"metrics":             map[string]any{"bindAddress": "0"},
		"health":              map[string]any{"healthProbeBindAddress": probe},
	}
	env, err := certsEnv(a, f, serving)
	if err != nil {
		return componentSpec{}, err
	}
	if a.certsFromTempDir {
		delete(webhook, "certDir")
	}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return componentSpec{}, fmt.Errorf("writing the %s configuration: %w", a.name, err)
	}
	path := filepath.Join(f.dataDir, a.componentName()+".yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return componentSpec{}, fmt.Errorf("writing the %s configuration: %w", a.name, err)
	}
	return componentSpec{
		name:   a.componentName(),
		binary: a.binary(f.assets),
		args:   []string{"--kubeconfig=" + f.kubeconfig, "--config=" + path, "--zap-devel=false"},
		env:    env,
		health: "http://" + probe + "/readyz",
	}, nil
}

// checkFixedPort fails, naming the addon, when its fixed port is taken:
// started anyway, the controller would die, or another process would
// answer its health checks.
func checkFixedPort(a addon) error {
	if a.fixedPort == 0 {
		return nil
	}
	l, err := net.Listen("tcp", ":"+strconv.Itoa(a.fixedPort))
	if err != nil {
		return fmt.Errorf("--with %s: its controller listens on port %d, which is taken (another local cluster running it?): %w", a.name, a.fixedPort, err)
	}
	return l.Close()
}

// flagConfiguredSpec runs a controller configured by flags (KubeRay's
// operator, the MPI operator). KUBECONFIG is set too: the MPI operator
// prefers it to its flag, and the caller's own must never point a local
// cluster's controller at another cluster.
func flagConfiguredSpec(a addon, f clusterFiles, serving addonServing, probe string) (componentSpec, error) {
	args, health := a.flags(f.kubeconfig, probe)
	certs, err := certsEnv(a, f, serving)
	if err != nil {
		return componentSpec{}, err
	}
	env := append(append(slices.Clone(a.env), "KUBECONFIG="+f.kubeconfig), certs...)
	return componentSpec{
		name:   a.componentName(),
		binary: a.binary(f.assets),
		args:   args,
		env:    env,
		health: health,
	}, nil
}

// certsEnv is the environment that gives a certsFromTempDir controller the
// local webhook certificates: a TMPDIR holding them where controller-runtime
// looks. Other controllers get none.
func certsEnv(a addon, f clusterFiles, serving addonServing) ([]string, error) {
	if !a.certsFromTempDir {
		return nil, nil
	}
	tmp, err := tempDirWithCerts(filepath.Join(f.dataDir, a.componentName()+"-tmp"), serving.certDir)
	if err != nil {
		return nil, fmt.Errorf("the %s webhook certificates: %w", a.name, err)
	}
	return []string{"TMPDIR=" + tmp}, nil
}

// tempDirWithCerts makes tmp a temporary folder whose
// k8s-webhook-server/serving-certs (controller-runtime's default webhook
// certificate folder) holds the certificates of certDir.
func tempDirWithCerts(tmp, certDir string) (string, error) {
	serving := filepath.Join(tmp, "k8s-webhook-server", "serving-certs")
	if err := os.MkdirAll(serving, 0o700); err != nil {
		return "", err
	}
	for _, name := range []string{"tls.crt", "tls.key"} {
		data, err := os.ReadFile(filepath.Join(certDir, name))
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(serving, name), data, 0o600); err != nil {
			return "", err
		}
	}
	return tmp, nil
}

// addonWebhooks reads the addon's rendered webhook configurations and
// points them at serving: each renamed after the addon (both projects name
// theirs "mutating-webhook-configuration"), each webhook's service
// replaced by the local URL of its path, trusting the local CA.
func addonWebhooks(a addon, assets string, serving addonServing) ([]client.Object, []string, error) {
	data, err := os.ReadFile(a.webhooksFile(assets))
	if err != nil {
		return nil, nil, fmt.Errorf("reading the %s webhooks: %w", a.name, err)
	}
	decoder := serializer.NewCodecFactory(scheme.Scheme).UniversalDeserializer()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []client.Object
	var urls []string
	point := func(cc *admissionv1.WebhookClientConfig, webhook string) error {
		if cc.Service == nil || cc.Service.Path == nil {
			return fmt.Errorf("%s webhook %s: no service path to serve locally", a.name, webhook)
		}
		cc.URL = ptr.To(serving.url(*cc.Service.Path))
		cc.Service, cc.CABundle = nil, serving.caData
		urls = append(urls, *cc.URL)
		return nil
	}
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("reading the %s webhooks: %w", a.name, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := decoder.Decode(doc, nil, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("parsing the %s webhooks: %w", a.name, err)
		}
		// Each configuration, renamed, and its webhooks' client configs.
		type clientConfig struct {
			config  *admissionv1.WebhookClientConfig
			webhook string
		}
		var configs []clientConfig
		switch cfg := obj.(type) {
		case *admissionv1.MutatingWebhookConfiguration:
			cfg.Name = a.name + "-" + cfg.Name
			for i := range cfg.Webhooks {
				configs = append(configs, clientConfig{&cfg.Webhooks[i].ClientConfig, cfg.Webhooks[i].Name})
			}
			objs = append(objs, cfg)
		case *admissionv1.ValidatingWebhookConfiguration:
			cfg.Name = a.name + "-" + cfg.Name
			for i := range cfg.Webhooks {
				configs = append(configs, clientConfig{&cfg.Webhooks[i].ClientConfig, cfg.Webhooks[i].Name})
			}
			objs = append(objs, cfg)
		default:
			// The kustomization renders the webhooks' Service too: the
			// local cluster reaches the addon by URL instead.
		}
		for _, c := range configs {
			if err := point(c.config, c.webhook); err != nil {
				return nil, nil, err
			}
		}
	}
	if len(objs) == 0 {
		return nil, nil, fmt.Errorf("%s: no webhook configuration in %s", a.name, a.webhooksFile(assets))
	}
	return objs, urls, nil
}

// waitWebhooksServed waits until the addon answers on every webhook path:
// its server listens before its handlers are registered, and an API
// request meanwhile would be refused (the webhooks fail closed).
func waitWebhooksServed(ctx context.Context, name string, urls []string, caData []byte) error {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caData) {
		return errors.New("the local webhook CA is not PEM")
	}
	httpClient := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
	}}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, componentTimeout, true, func(ctx context.Context) (bool, error) {
		for _, url := range urls {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, http.NoBody)
			if err != nil {
				return false, err
			}
			resp, err := httpClient.Do(req)
			if err != nil {
				return false, nil
			}
			_ = resp.Body.Close()
			// An admission handler answers an empty review with an
			// error review; only an unregistered path is not found.
			if resp.StatusCode == http.StatusNotFound {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the %s webhooks to be served: %w", name, err)
	}
	return nil
}

// startAddons runs each addon, registers its webhooks once it is healthy
// and waits until they are served.
func (c *Cluster) startAddons(ctx context.Context, addons []addon, f clusterFiles, cl client.Client) error {
	for _, a := range addons {
		if err := checkFixedPort(a); err != nil {
			return err
		}
		serving, err := newAddonServing(c.Env.WebhookInstallOptions)
		if err != nil {
			return err
		}
		probe, err := childproc.FreeLocalAddress()
		if err != nil {
			return err
		}
		spec, err := addonSpec(a, f, serving, probe)
		if err != nil {
			return err
		}
		if a.prepare != nil {
			if err := a.prepare(ctx, cl, probe); err != nil {
				return fmt.Errorf("--with %s: %w", a.name, err)
			}
		}
		var objs []client.Object
		var urls []string
		if !a.noWebhooks {
			if objs, urls, err = addonWebhooks(a, f.assets, serving); err != nil {
				return err
			}
		}
		if err := c.components.start(ctx, spec, f.logDir); err != nil {
			return err
		}
		for _, obj := range objs {
			if err := cl.Create(ctx, obj); err != nil {
				return fmt.Errorf("registering the %s webhooks (%s): %w", a.name, obj.GetName(), err)
			}
		}
		if err := waitWebhooksServed(ctx, a.name, urls, serving.caData); err != nil {
			return err
		}
	}
	return nil
}

// withAddonFrameworks turns on the integrations that queue the addons'
// kinds: a kind whose controller runs here is never run unqueued because a
// configuration file named other frameworks.
func withAddonFrameworks(cfg *configapi.Configuration, addons []addon) {
	for _, a := range addons {
		for _, framework := range kinds.OfGroups(a.groups...) {
			if !slices.Contains(cfg.Integrations.Frameworks, framework) {
				cfg.Integrations.Frameworks = append(cfg.Integrations.Frameworks, framework)
			}
		}
	}
}

// addonCRDPaths are the CRD folders of the addons, for envtest to install
// with sluice's own.
func addonCRDPaths(addons []addon, assets string) []string {
	paths := make([]string, 0, len(addons))
	for _, a := range addons {
		paths = append(paths, a.crdDir(assets))
	}
	return paths
}
