package bench

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
	"time"

	"github.com/sluicehq/sluice/internal/childproc"
)

// managerProcess is `sluice manager` in its own process, so that its CPU
// time and peak memory are its own.
type managerProcess struct {
	proc       *childproc.Process
	metricsURL string
}

// managerUsage is what the kernel accounted to the manager process.
type managerUsage struct {
	CPU     time.Duration // user + system
	PeakRSS int64         // bytes
}

// startManager runs binary's manager subcommand against kubeconfig, without
// webhooks or leader election, with extraArgs, logging into workDir, and
// waits until it is ready.
func startManager(ctx context.Context, binary string, extraArgs []string, kubeconfig, workDir string) (*managerProcess, error) {
	metricsAddr, err := childproc.FreeLocalAddress()
	if err != nil {
		return nil, err
	}
	healthAddr, err := childproc.FreeLocalAddress()
	if err != nil {
		return nil, err
	}
	args := append([]string{"manager",
		"--kubeconfig", kubeconfig,
		"--webhooks=false",
		"--leader-elect=false",
		"--metrics-bind-address", metricsAddr, "--metrics-secure=false",
		"--health-probe-bind-address", healthAddr,
	}, extraArgs...)
	proc, err := childproc.Start("the manager", binary, args, filepath.Join(workDir, "manager.log"))
	if err != nil {
		return nil, err
	}
	m := &managerProcess{proc: proc, metricsURL: "http://" + metricsAddr + "/metrics"}
	if err := proc.WaitHealthy(ctx, "http://"+healthAddr+"/readyz", time.Minute); err != nil {
		_, _ = m.stop()
		return nil, err
	}
	return m, nil
}

// stop ends the manager with SIGTERM (SIGKILL after 30 s) and returns what
// it used.
func (m *managerProcess) stop() (managerUsage, error) {
	state := m.proc.Stop(30 * time.Second)
	rusage, ok := state.SysUsage().(*syscall.Rusage)
	if !ok {
		return managerUsage{}, errors.New("the operating system does not report the manager's resource usage")
	}
	usage := managerUsage{
		CPU:     time.Duration(rusage.Utime.Nano() + rusage.Stime.Nano()),
		PeakRSS: rusage.Maxrss * 1024, // Linux reports KiB
	}
	if !state.Success() {
		return usage, fmt.Errorf("the manager exited with %v (log in %s)", state, m.proc.LogPath())
	}
	return usage, nil
}
