package e2e

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluicehq/sluice/apis/scheme"
	"github.com/sluicehq/sluice/internal/devcluster"
)

// devCluster is a `sluice dev` process started by the tests, as a user
// starts it: a fresh data folder, free ports, the ready line on stdout.
type devCluster struct {
	cmd        *exec.Cmd
	dataDir    string
	kubeconfig string
	readyAfter time.Duration
	stderr     *lockedBuffer
	lines      chan string
	exited     chan error
}

// startDev runs `sluice dev` with extra flags in dir and waits for its ready
// line.
func startDev(dir string, extra ...string) (*devCluster, error) {
	d := &devCluster{dataDir: filepath.Join(dir, "data"), kubeconfig: filepath.Join(dir, "kubeconfig"),
		stderr: &lockedBuffer{}, lines: make(chan string, 16), exited: make(chan error, 1)}
	args := append([]string{"dev", "--assets", assetsDir, "--data-dir", d.dataDir, "--kubeconfig-out", d.kubeconfig}, extra...)
	d.cmd = exec.Command(sluiceBin, args...)
	d.cmd.Stderr = d.stderr
	stdout, err := d.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	started := time.Now()
	if err := d.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			d.lines <- scanner.Text()
		}
		close(d.lines)
		d.exited <- d.cmd.Wait()
	}()
	select {
	case line, ok := <-d.lines:
		if !ok {
			return nil, fmt.Errorf("sluice dev exited before its ready line:\n%s", tail(d.stderr.String(), 40))
		}
		if want := devcluster.ReadyLinePrefix + d.kubeconfig; line != want {
			_ = d.cmd.Process.Kill()
			return nil, fmt.Errorf("first line %q, want %q", line, want)
		}
	case <-time.After(3 * time.Minute):
		_ = d.cmd.Process.Kill()
		return nil, fmt.Errorf("no ready line within 3 minutes:\n%s", tail(d.stderr.String(), 40))
	}
	d.readyAfter = time.Since(started)
	return d, nil
}

// client is a controller-runtime client of the cluster, as admin.
func (d *devCluster) client() (client.Client, error) {
	return d.clientAs("")
}

// clientAs is a client of the cluster that impersonates user (none: as
// admin).
func (d *devCluster) clientAs(user string) (client.Client, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", d.kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.Impersonate.UserName = user
	return client.New(cfg, client.Options{Scheme: scheme.Scheme})
}

// interrupt stops the cluster as Ctrl-C does and checks that it exits
// cleanly, printing nothing more, and leaves no data folder behind.
func (d *devCluster) interrupt() error {
	if err := d.cmd.Process.Signal(syscall.SIGINT); err != nil {
		return err
	}
	var extra []string
	for line := range d.lines {
		extra = append(extra, line)
	}
	select {
	case err := <-d.exited:
		if err != nil {
			return fmt.Errorf("sluice dev exited with %v:\n%s", err, tail(d.stderr.String(), 40))
		}
	case <-time.After(time.Minute):
		_ = d.cmd.Process.Kill()
		return errors.New("sluice dev did not stop within a minute of SIGINT")
	}
	if len(extra) > 0 {
		return fmt.Errorf("unexpected output after the ready line: %q", extra)
	}
	if _, err := os.Stat(d.dataDir); !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("the data folder is still there without --keep: %v", err)
	}
	return nil
}

// childPID finds the pid of the child process of sluice dev whose command
// line contains name.
func (d *devCluster) childPID(name string) (int, error) {
	// Each thread lists the children it forked; Go forks from any thread.
	lists, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", d.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	var children []string
	for _, list := range lists {
		if raw, err := os.ReadFile(list); err == nil {
			children = append(children, strings.Fields(string(raw))...)
		}
	}
	for _, field := range children {
		var pid int
		if _, err := fmt.Sscan(field, &pid); err != nil {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err == nil && strings.Contains(string(cmdline), name) {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no child process of sluice dev runs %s", name)
}

// lockedBuffer collects a child's stderr while tests read it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func kubectl(t *testing.T, kubeconfig string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(assetsDir, "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func kubectlFails(t *testing.T, kubeconfig, verb, flag, file, stdin string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(assetsDir, "kubectl"), "--kubeconfig", kubeconfig, verb, flag, file)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("kubectl %s succeeded, want a rejection:\n%s", verb, out)
	}
	return string(out)
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
