// Package e2e runs the real sluice binary as a user would: `sluice dev` up to
// its ready line, driven with the kubectl that `make tools` builds, and
// `sluice manager` refusing bad configuration.
package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

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
	var err error
	if assetsDir, err = framework.AssetsDir(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := os.Stat(filepath.Join(assetsDir, "kubectl")); err != nil {
		fmt.Fprintln(os.Stderr, "kubectl missing: run `make tools`:", err)
		return 1
	}
	tmp, err := os.MkdirTemp("", "sluice-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	if sluiceBin, err = framework.BuildSluice(tmp); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
