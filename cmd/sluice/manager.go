package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"

	configfile "github.com/sluicehq/sluice/apis/config"
	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	"github.com/sluicehq/sluice/internal/integration/kinds"
	"github.com/sluicehq/sluice/internal/manager"
)

// managerFlags are the manager's flags. A flag given on the command line wins
// over the configuration file, which wins over the defaults.
type managerFlags struct {
	configFile             string
	kubeconfig             string
	webhooks               bool
	leaderElect            bool
	metricsBindAddress     string
	healthProbeBindAddress string
	webhookPort            int
	webhookCertDir         string
	internalCertManagement bool
	pprofBindAddress       string
	metricsSecure          bool
	metricsCertDir         string
	checkStuckAfter        time.Duration
	logs                   logFlags
}

func newManagerCommand() *cobra.Command {
	f := &managerFlags{}
	cmd := &cobra.Command{
		Use:   "manager",
		Short: "Run the sluice controller manager against a cluster",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runManager(cmd, f)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.configFile, "config", "", "configuration file (kind Configuration, config.kueue.x-k8s.io/v1beta2)")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster; default: $KUBECONFIG, ~/.kube/config or in-cluster")
	fs.BoolVar(&f.webhooks, "webhooks", true, "serve the admission webhooks (false for benchmarks against a bare API server)")
	fs.BoolVar(&f.leaderElect, "leader-elect", true, "elect a leader through a Lease so that only one manager admits")
	fs.StringVar(&f.metricsBindAddress, "metrics-bind-address", configapi.DefaultMetricsBindAddress, `metrics endpoint address; "0" disables it`)
	fs.BoolVar(&f.metricsSecure, "metrics-secure", true, "serve the metrics over HTTPS to authenticated, authorized clients; false: plain HTTP for anyone (local runs, benchmarks)")
	fs.StringVar(&f.metricsCertDir, "metrics-cert-dir", "", "directory of the metrics serving certificate (tls.crt, tls.key); default: a self-signed one")
	fs.StringVar(&f.healthProbeBindAddress, "health-probe-bind-address", configapi.DefaultHealthProbeBindAddress, "address of /healthz and /readyz")
	fs.IntVar(&f.webhookPort, "webhook-port", configapi.DefaultWebhookPort, "port of the webhook server")
	fs.StringVar(&f.webhookCertDir, "webhook-cert-dir", configapi.DefaultWebhookCertDir, "directory of the webhook serving certificate (tls.crt, tls.key)")
	fs.BoolVar(&f.internalCertManagement, "internal-cert-management", true, "create and rotate the webhook certificates; false uses the ones in --webhook-cert-dir")
	fs.DurationVar(&f.checkStuckAfter, "admission-check-stuck-after", manager.DefaultCheckStuckAfter,
		"how long an admission check may stay not Ready before the workload's Admitted condition says for how long (0: never)")
	fs.StringVar(&f.pprofBindAddress, "pprof-bind-address", "", "serve Go's profiles (/debug/pprof) on this address; default: off")
	f.logs.bind(fs)
	return cmd
}

func runManager(cmd *cobra.Command, f *managerFlags) error {
	log, err := f.logs.setup()
	if err != nil {
		return err
	}
	file := configfile.Default()
	if f.configFile != "" {
		if file, err = configfile.Load(f.configFile); err != nil {
			return err
		}
	}
	cfg := file.Config
	f.applyTo(cmd.Flags(), cfg)
	if errs := configapi.Validate(cfg); len(errs) > 0 {
		return fmt.Errorf("flags: %w", errs.ToAggregate())
	}
	restConfig, err := loadRESTConfig(f.kubeconfig)
	if err != nil {
		return err
	}
	ctx := ctrl.SetupSignalHandler()
	mgr, err := manager.New(ctx, restConfig, cfg, manager.Options{EnableWebhooks: f.webhooks,
		InsecureMetrics: !f.metricsSecure, MetricsCertDir: f.metricsCertDir, Build: build(), CheckStuckAfter: f.checkStuckAfter,
		// Set by the Deployment (downward API): the leader labels its Pod.
		PodName: os.Getenv("POD_NAME"), PodNamespace: os.Getenv("POD_NAMESPACE")})
	if err != nil {
		return err
	}
	log.Info("starting the manager", "version", version, "namespace", *cfg.Namespace, "webhooks", f.webhooks)
	if notYet := file.NotActedOn(kinds.Frameworks()); len(notYet) > 0 {
		log.Info("configuration accepted but not acted on yet (docs/configuration.md)", "fields", notYet)
	}
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running the manager: %w", err)
	}
	return nil
}

// applyTo copies the flags set on the command line onto the configuration.
func (f *managerFlags) applyTo(fs *pflag.FlagSet, cfg *configapi.Configuration) {
	if fs.Changed("leader-elect") {
		cfg.LeaderElection.LeaderElect = &f.leaderElect
	}
	if fs.Changed("metrics-bind-address") {
		cfg.Metrics.BindAddress = f.metricsBindAddress
	}
	if fs.Changed("health-probe-bind-address") {
		cfg.Health.HealthProbeBindAddress = f.healthProbeBindAddress
	}
	if fs.Changed("webhook-port") {
		cfg.Webhook.Port = &f.webhookPort
	}
	if fs.Changed("pprof-bind-address") {
		cfg.PprofBindAddress = f.pprofBindAddress
	}
	if fs.Changed("webhook-cert-dir") {
		cfg.Webhook.CertDir = f.webhookCertDir
	}
	if fs.Changed("internal-cert-management") {
		cfg.InternalCertManagement.Enable = &f.internalCertManagement
	}
}

func loadRESTConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		c, err := ctrl.GetConfig()
		if err != nil {
			return nil, fmt.Errorf("finding a cluster: %w", err)
		}
		return c, nil
	}
	c, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading kubeconfig %s: %w", kubeconfig, err)
	}
	return c, nil
}
