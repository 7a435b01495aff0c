package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/sluicehq/sluice/internal/childproc"
)

// Managers the adapter runs under Kueue's runner.
const (
	ManagerKueue  = "kueue"
	ManagerSluice = "sluice"
)

// AdapterOptions say which manager the adapter runs and where it reports.
type AdapterOptions struct {
	// Manager is ManagerKueue (Binary is minimalkueue) or ManagerSluice
	// (Binary is the sluice binary, run as "sluice manager").
	Manager string
	Binary  string
	// Report is where the adapter writes its adapterReport as JSON.
	Report string
	// ManagerArgs are added to sluice's manager command line.
	ManagerArgs []string
}

// adapterReport is what the adapter measured of one manager run.
type adapterReport struct {
	Manager string `json:"manager"`
	// CPUSeconds and PeakRSSBytes are the kernel's accounting of the manager
	// process alone (not the adapter).
	CPUSeconds   float64 `json:"cpuSeconds"`
	PeakRSSBytes int64   `json:"peakRSSBytes"`
	// ClientRequests are the manager's own requests by "METHOD code", from
	// client-go's rest_client_requests_total on its metrics endpoint.
	ClientRequests map[string]float64 `json:"clientRequests"`
	// APIWrites are every client's writes, from the API server's
	// apiserver_request_total, read just before the manager was stopped.
	APIWrites writeCounts `json:"apiWrites"`
}

// runnerArgs are the flags Kueue's runner passes to the program it starts
// as minimalkueue.
type runnerArgs struct {
	kubeconfig  string
	metricsPort int
	logLevel    string
}

func parseRunnerArgs(args []string) (runnerArgs, error) {
	fs := flag.NewFlagSet("minimalkueue", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var r runnerArgs
	fs.StringVar(&r.kubeconfig, "kubeconfig", "", "")
	fs.IntVar(&r.metricsPort, "metricsPort", 0, "")
	fs.StringVar(&r.logLevel, "zap-log-level", "", "")
	// Accepted and ignored: profiles and TAS are minimalkueue's own.
	fs.String("cpuprofile", "", "")
	fs.String("memprofile", "", "")
	fs.Bool("enableTAS", false, "")
	if err := fs.Parse(args); err != nil {
		return r, fmt.Errorf("the runner's arguments %q: %w", args, err)
	}
	if r.kubeconfig == "" {
		return r, errors.New("the runner passed no --kubeconfig")
	}
	return r, nil
}

// RunAdapter is the program Kueue's runner starts as its "minimalkueue"
// (--minimalKueue): it starts the chosen manager against the runner's
// cluster, and when the runner stops it with SIGINT it reads the manager's
// and the API server's request counts, stops the manager, and writes what
// it measured to opts.Report. stop delivers the runner's signal.
func RunAdapter(ctx context.Context, opts AdapterOptions, args []string, stop <-chan os.Signal) error {
	ra, err := parseRunnerArgs(args)
	if err != nil {
		return err
	}
	metricsPort := ra.metricsPort
	if metricsPort == 0 {
		if metricsPort, err = freePort(); err != nil {
			return err
		}
	}
	managerArgs, healthURL, err := managerCommandLine(opts.Manager, ra, metricsPort)
	if err != nil {
		return err
	}
	if opts.Manager == ManagerSluice {
		managerArgs = append(managerArgs, opts.ManagerArgs...)
	}
	restConfig, err := clientcmd.BuildConfigFromFlags("", ra.kubeconfig)
	if err != nil {
		return fmt.Errorf("reading the runner's kubeconfig %s: %w", ra.kubeconfig, err)
	}
	clientset, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return fmt.Errorf("a client for the API server's metrics: %w", err)
	}
	logPath := filepath.Join(filepath.Dir(opts.Report), opts.Manager+"-manager.log")
	proc, err := childproc.Start(opts.Manager, opts.Binary, managerArgs, logPath)
	if err != nil {
		return err
	}
	if healthURL != "" {
		if err := proc.WaitHealthy(ctx, healthURL, time.Minute); err != nil {
			proc.Stop(10 * time.Second)
			return err
		}
	}
	select {
	case <-proc.Exited():
		return proc.ExitError()
	case <-stop:
	}
	report := adapterReport{Manager: opts.Manager}
	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)
	metricsDump := filepath.Join(filepath.Dir(opts.Report), opts.Manager+"-metrics.txt")
	report.ClientRequests, err = scrapeClientRequests(ctx, metricsURL, metricsDump)
	if err != nil {
		proc.Stop(time.Minute)
		return err
	}
	report.APIWrites, err = scrapeAPIWrites(ctx, clientset)
	if err != nil {
		proc.Stop(time.Minute)
		return err
	}
	state := proc.Stop(time.Minute)
	if rusage, ok := state.SysUsage().(*syscall.Rusage); ok {
		report.CPUSeconds = time.Duration(rusage.Utime.Nano() + rusage.Stime.Nano()).Seconds()
		report.PeakRSSBytes = rusage.Maxrss * 1024 // Linux reports KiB
	}
	raw, err := json.MarshalIndent(report, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(opts.Report, raw, 0o644); err != nil {
		return fmt.Errorf("writing the adapter's report: %w", err)
	}
	return nil
}

// managerCommandLine maps the runner's launch contract onto each manager's
// flags, and says where its readiness is served ("" when it has none).
func managerCommandLine(manager string, ra runnerArgs, metricsPort int) ([]string, string, error) {
	switch manager {
	case ManagerKueue:
		args := []string{"--kubeconfig", ra.kubeconfig, "--metricsPort", strconv.Itoa(metricsPort)}
		if ra.logLevel != "" {
			args = append(args, "--zap-log-level="+ra.logLevel)
		}
		return args, "", nil
	case ManagerSluice:
		healthAddr, err := childproc.FreeLocalAddress()
		if err != nil {
			return nil, "", err
		}
		args := []string{"manager", "--kubeconfig", ra.kubeconfig,
			"--webhooks=false", "--leader-elect=false",
			"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", metricsPort), "--metrics-secure=false",
			"--health-probe-bind-address", healthAddr}
		if ra.logLevel != "" {
			args = append(args, "--zap-log-level="+ra.logLevel)
		}
		return args, "http://" + healthAddr + "/readyz", nil
	default:
		return nil, "", fmt.Errorf("--manager %q: must be %q or %q", manager, ManagerKueue, ManagerSluice)
	}
}

func freePort() (int, error) {
	addr, err := childproc.FreeLocalAddress()
	if err != nil {
		return 0, err
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(port)
}

// scrapeClientRequests reads client-go's request counts of a manager, by
// "METHOD code", and keeps all its metrics in dump for a closer look.
func scrapeClientRequests(ctx context.Context, url, dump string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading the manager's metrics: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("reading the manager's metrics: %w", err)
	}
	if err := os.WriteFile(dump, raw, 0o644); err != nil {
		return nil, err
	}
	families, err := parseMetrics(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("parsing the manager's metrics: %w", err)
	}
	out := map[string]float64{}
	f := families["rest_client_requests_total"]
	if f == nil {
		return nil, fmt.Errorf("the manager's metrics at %s have no rest_client_requests_total", url)
	}
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		out[labels["method"]+" "+labels["code"]] += m.GetCounter().GetValue()
	}
	return out, nil
}
