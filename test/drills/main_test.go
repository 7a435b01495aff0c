//go:build drills

// Package drills injects faults into a running sluice and checks that
// nothing is lost: each drill starts its own etcd, kube-apiserver,
// controller-manager, scheduler and simulated nodes, one or two `sluice
// manager` processes (the binary, built here), creates load, injects one
// fault and checks the invariants throughout. `make drills` runs them; they
// print what they checked and the figures docs/reliability.md reports.
package drills

import (
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/sluicehq/sluice/test/integration/framework"
)

var (
	sluiceBin string
	assetsDir string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	// The control plane helpers log through controller-runtime; the
	// managers under test log to their own files.
	ctrllog.SetLogger(logr.Discard())
	var tmp string
	var err error
	if assetsDir, tmp, sluiceBin, err = framework.BinaryAndAssets("sluice-drills-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	return m.Run()
}
