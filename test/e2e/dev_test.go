package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/devcluster"
)

func TestDevClusterServesTheSampleQueue(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "dev")
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, sluiceBin, "dev", "--assets", assetsDir, "--data-dir", dataDir, "--kubeconfig-out", kubeconfig)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 16)
	go func() {
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			lines <- scanner.Text()
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	defer func() {
		if t.Failed() {
			t.Logf("sluice dev stderr:\n%s", tail(stderr.String(), 40))
		}
	}()

	started := time.Now()
	var readyLines []string
	select {
	case line := <-lines:
		readyLines = append(readyLines, line)
	case <-time.After(3 * time.Minute):
		t.Fatal("no ready line within 3 minutes")
	}
	t.Logf("ready after %s", time.Since(started).Round(100*time.Millisecond))
	if want := devcluster.ReadyLinePrefix + kubeconfig; readyLines[0] != want {
		t.Fatalf("first line %q, want %q", readyLines[0], want)
	}

	out := kubectl(t, kubeconfig, "get", "clusterqueues")
	if !strings.Contains(out, "cluster-queue") {
		t.Errorf("kubectl get clusterqueues does not list the sample queue:\n%s", out)
	}
	out = kubectl(t, kubeconfig, "get", "localqueues", "-n", "default", "-o", "jsonpath={.items[*].metadata.name}")
	if out != "user-queue" {
		t.Errorf("sample LocalQueue: got %q", out)
	}
	// The manager holds its leader-election Lease.
	out = kubectl(t, kubeconfig, "get", "leases", "-n", "sluice-system", "-o", "jsonpath={.items[*].spec.holderIdentity}")
	if strings.TrimSpace(out) == "" {
		t.Errorf("no leader holds the manager's Lease")
	}
	// The webhooks answer: an invalid queue is rejected naming its field.
	bad := kubectlFails(t, kubeconfig, "create", "-f", "-", `apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: bad, namespace: default}
spec: {clusterQueue: "Not A Name"}
`)
	if !strings.Contains(bad, "spec.clusterQueue") {
		t.Errorf("the invalid LocalQueue was not rejected by field: %s", bad)
	}

	// Ctrl-C stops everything cleanly and removes the data folder.
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for line := range lines {
		t.Errorf("unexpected output after the ready line: %q", line)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("sluice dev exited with %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("sluice dev did not stop within a minute of SIGINT")
	}
	if _, err := os.Stat(dataDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the data folder is still there without --keep: %v", err)
	}
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
