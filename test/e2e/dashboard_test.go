package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluicehq/sluice/internal/childproc"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// chromium runs Debian's Chromium headless with args (make test installs
// it), in a profile of its own, without the background traffic a closed
// network refuses.
func chromium(ctx context.Context, t *testing.T, args ...string) []byte {
	t.Helper()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
		"--user-data-dir=" + t.TempDir()}
	// Bounded: a page that never finishes loading must fail the test, not
	// hang it.
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "chromium", append(base, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, tail(stderr.String(), 20))
	}
	return out
}

// The dashboard against sluice dev, in a real browser: a queue's usage
// and a waiting workload's reason are on the page Chromium renders, with
// its script running; a screenshot is kept (bin/artifacts/dashboard.png);
// a new workload reaches an open page through the event stream, without
// a reload.
func TestDashboardInTheBrowser(t *testing.T) {
	c := sharedClient(t)
	const ns = "e2e-dash"
	e2eQueue(t, c, ns, "on-demand", "2")
	addr, err := childproc.FreeLocalAddress()
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	dash := exec.CommandContext(ctx, sluiceBin, "dashboard", "--kubeconfig", shared.kubeconfig, "--listen", addr)
	var dashOut bytes.Buffer
	dash.Stdout, dash.Stderr = &dashOut, &dashOut
	// Gone with the test binary, even if it dies without cleaning up.
	dash.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := dash.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = dash.Process.Kill()
		_ = dash.Wait()
		if t.Failed() {
			t.Logf("sluice dashboard:\n%s", tail(dashOut.String(), 30))
		}
	})
	// The suite's cluster is shared: give the simulated nodes back.
	t.Cleanup(func() {
		_ = c.DeleteAllOf(context.Background(), &batchv1.Job{}, client.InNamespace(ns), client.PropagationPolicy(metav1.DeletePropagationBackground))
	})
	for _, j := range []struct {
		name   string
		pods   int32
		runFor string
	}{{"holds-both", 2, "10m"}, {"waits", 1, ""}} {
		if err := c.Create(ctx, queuedJob(ns, j.name, j.pods, j.runFor)); err != nil {
			t.Fatal(err)
		}
	}
	url := "http://" + addr + "/"
	var page string
	eventually(t, "the page with the queue full and the waiting workload's reason", func(ctx context.Context) (bool, error) {
		resp, err := http.Get(url)
		if err != nil {
			return false, nil // not listening yet
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		page = string(body)
		return strings.Contains(page, "2 / 2") && strings.Contains(page, "WaitingForQuota"), err
	})

	// The DOM Chromium builds once the page has loaded. (Its script keeps
	// an event stream open, which virtual time would wait for forever; the
	// stream is checked below.)
	dom := string(chromium(ctx, t, "--dump-dom", url))
	for _, want := range []string{`id="cq-` + ns + `"`, "2 / 2", "WaitingForQuota", ns + "/job-waits-", "Recent admissions and evictions", `<script src="static/live.js">`} {
		if !strings.Contains(dom, want) {
			t.Errorf("the rendered page lacks %q:\n%s", want, tail(dom, 60))
		}
	}
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(root, "bin", "artifacts", "dashboard.png")
	if err := os.MkdirAll(filepath.Dir(shot), 0o755); err != nil {
		t.Fatal(err)
	}
	chromium(ctx, t, "--window-size=1280,900", "--hide-scrollbars", "--screenshot="+shot, url)
	if data, err := os.ReadFile(shot); err != nil || !bytes.HasPrefix(data, []byte("\x89PNG")) || len(data) < 10_000 {
		t.Errorf("screenshot %s: %v, %d bytes", shot, err, len(data))
	}

	// Live: an open event stream gets the view again once a new Job's
	// workload exists.
	streamCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(streamCtx, http.MethodGet, url+"events", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := c.Create(ctx, queuedJob(ns, "arrives-later", 1, "")); err != nil {
		t.Fatal(err)
	}
	scanner := bufio.NewScanner(resp.Body)
	scanner.Buffer(make([]byte, 1<<20), 1<<22)
	for scanner.Scan() {
		if strings.Contains(scanner.Text(), ns+"/job-arrives-later-") {
			return
		}
	}
	t.Errorf("the event stream never showed the new workload: %v", fmt.Sprint(scanner.Err()))
}
