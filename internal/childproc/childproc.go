// Package childproc runs programs as child processes the way sluice's local
// cluster and benchmark need them: output to a log file, readiness through
// a health endpoint (never a sleep), a channel that says when a child died,
// and a stop that asks first (SIGTERM) and insists later (SIGKILL). It owns
// nothing else: which programs run, with which flags, is the caller's.
package childproc

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Process is a started child.
type Process struct {
	Name string
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{}
	err  error
}

// Start runs binary with args, writing its output to logPath.
func Start(name, binary string, args []string, logPath string) (*Process, error) {
	return StartWithEnv(name, binary, args, nil, logPath)
}

// StartWithEnv is Start with env ("KEY=value") added to this process's
// environment.
func StartWithEnv(name, binary string, args, env []string, logPath string) (*Process, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating the log of %s: %w", name, err)
	}
	cmd := exec.Command(binary, args...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return nil, fmt.Errorf("starting %s (%s): %w", name, binary, err)
	}
	p := &Process{Name: name, cmd: cmd, log: log, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Exited is closed once the child ended, for whatever reason.
func (p *Process) Exited() <-chan struct{} { return p.done }

// ExitError says how the child ended; call it after Exited is closed.
func (p *Process) ExitError() error {
	if p.err != nil {
		return fmt.Errorf("%s exited: %w (log: %s)", p.Name, p.err, p.log.Name())
	}
	return fmt.Errorf("%s exited (log: %s)", p.Name, p.log.Name())
}

// LogPath is where the child's output goes.
func (p *Process) LogPath() string { return p.log.Name() }

// Stop asks the child to end (SIGTERM), kills it after grace, and returns
// its final state.
func (p *Process) Stop(grace time.Duration) *os.ProcessState {
	defer p.log.Close()
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
	return p.cmd.ProcessState
}

// WaitHealthy polls url until it answers 200, the child exits, or timeout
// passes. HTTPS endpoints of local components serve self-signed
// certificates; their health is all that is read.
func (p *Process) WaitHealthy(ctx context.Context, url string, timeout time.Duration) error {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // a local health probe, nothing is trusted from it
	}}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		select {
		case <-p.done:
			return false, p.ExitError()
		default:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return false, nil
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s to be healthy at %s: %w", p.Name, url, err)
	}
	return nil
}

// FreeLocalAddress returns a 127.0.0.1 address with a port free right now.
func FreeLocalAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(l.Addr().(*net.TCPAddr).Port)), nil
}

// Signal sends sig to the child (the fault drills freeze, resume and kill
// managers).
func (p *Process) Signal(sig os.Signal) error {
	return p.cmd.Process.Signal(sig)
}
