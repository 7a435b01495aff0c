// Package e2e runs the real sluice binary as a user would: one `sluice dev`
// (API server, controller-manager, scheduler, kwok nodes, manager) for the
// suite, driven with client-go and the kubectl that `make tools` builds;
// `sluice dev` stopping when a component dies; `sluice manager` refusing bad
// configuration; and a short `sluice bench`.
package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluicehq/sluice/test/integration/framework"
)

var (
	sluiceBin string
	assetsDir string
	// shared is the suite's `sluice dev`, for the tests that only use it.
	shared *devCluster
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var tmp string
	var err error
	if assetsDir, tmp, sluiceBin, err = framework.BinaryAndAssets("sluice-e2e-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	if _, err := os.Stat(filepath.Join(assetsDir, "kubectl")); err != nil {
		fmt.Fprintln(os.Stderr, "kubectl missing: run `make tools`:", err)
		return 1
	}
	// 16-CPU nodes: the suite's tests leave Deployments, StatefulSets and
	// pods running on the shared nodes, and the last ones to run (the
	// other projects' controllers') need room beside them.
	if shared, err = startDev(filepath.Join(tmp, "shared"), "--with", "jobset,lws,trainer,ray,mpi,appwrapper", "--node-cpu", "16"); err != nil {
		fmt.Fprintln(os.Stderr, "starting the suite's sluice dev:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "sluice dev ready after %s\n", shared.readyAfter.Round(100*time.Millisecond))
	code := m.Run()
	// Ctrl-C stops everything cleanly and removes the data folder.
	if err := shared.interrupt(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the suite's sluice dev:", err)
		code = 1
	}
	return code
}
