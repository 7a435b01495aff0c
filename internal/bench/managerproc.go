package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// managerProcess is `sluice manager` in its own process, so that its CPU
// time and peak memory are its own.
type managerProcess struct {
	cmd        *exec.Cmd
	metricsURL string
	exited     chan struct{}
	waitErr    error
	log        *os.File
}

// managerUsage is what the kernel accounted to the manager process.
type managerUsage struct {
	CPU     time.Duration // user + system
	PeakRSS int64         // bytes
}

// startManager runs binary's manager subcommand against kubeconfig, without
// webhooks or leader election, with extraArgs, logging into workDir, and waits until it is
// ready.
func startManager(ctx context.Context, binary string, extraArgs []string, kubeconfig, workDir string) (*managerProcess, error) {
	metricsAddr, err := freeLocalAddress()
	if err != nil {
		return nil, err
	}
	healthAddr, err := freeLocalAddress()
	if err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(workDir, "manager.log"))
	if err != nil {
		return nil, fmt.Errorf("creating the manager's log: %w", err)
	}
	args := append([]string{"manager",
		"--kubeconfig", kubeconfig,
		"--webhooks=false",
		"--leader-elect=false",
		"--metrics-bind-address", metricsAddr,
		"--health-probe-bind-address", healthAddr,
	}, extraArgs...)
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return nil, fmt.Errorf("starting %s manager: %w", binary, err)
	}
	m := &managerProcess{cmd: cmd, metricsURL: "http://" + metricsAddr + "/metrics", exited: make(chan struct{}), log: log}
	go func() {
		m.waitErr = cmd.Wait()
		close(m.exited)
	}()
	readyURL := "http://" + healthAddr + "/readyz"
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		select {
		case <-m.exited:
			return false, fmt.Errorf("the manager exited: %v (log in %s)", m.waitErr, log.Name())
		default:
		}
		return httpOK(ctx, readyURL), nil
	})
	if err != nil {
		_, _ = m.stop()
		return nil, fmt.Errorf("waiting for the manager to be ready: %w", err)
	}
	return m, nil
}

// stop ends the manager with SIGTERM (SIGKILL after 30 s) and returns what
// it used.
func (m *managerProcess) stop() (managerUsage, error) {
	defer m.log.Close()
	select {
	case <-m.exited:
	default:
		_ = m.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-m.exited:
		case <-time.After(30 * time.Second):
			_ = m.cmd.Process.Kill()
			<-m.exited
		}
	}
	rusage, ok := m.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return managerUsage{}, errors.New("the operating system does not report the manager's resource usage")
	}
	usage := managerUsage{
		CPU:     time.Duration(rusage.Utime.Nano() + rusage.Stime.Nano()),
		PeakRSS: rusage.Maxrss * 1024, // Linux reports KiB
	}
	if !m.cmd.ProcessState.Success() {
		return usage, fmt.Errorf("the manager exited with %v (log in %s)", m.cmd.ProcessState, m.log.Name())
	}
	return usage, nil
}

func freeLocalAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(l.Addr().(*net.TCPAddr).Port)), nil
}

func httpOK(ctx context.Context, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
