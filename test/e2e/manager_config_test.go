package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The manager refuses to start on a bad configuration file, and says which
// field is wrong.
func TestManagerRejectsBadConfiguration(t *testing.T) {
	cases := []struct {
		name, config string
		wantInError  []string
	}{
		{"unknown field", `apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
manageJobsWithoutQueueName: true
waitForPodReady:
  enable: true
`, []string{`unknown field "waitForPodReady"`}},
		{"invalid value", `apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
clientConnection:
  qps: -5
`, []string{"clientConnection.qps", "greater than 0"}},
		{"unsupported framework", `apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
integrations:
  frameworks: ["batch/job", "example.com/unknown"]
`, []string{"integrations.frameworks[1]", "example.com/unknown"}},
		{"wrong kind", `apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Settings
`, []string{"kind", "Settings"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(path, []byte(tc.config), 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			// No cluster is needed: the file is checked before connecting.
			cmd := exec.CommandContext(ctx, sluiceBin, "manager", "--config", path, "--kubeconfig", filepath.Join(t.TempDir(), "none"))
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the manager accepted the configuration:\n%s", out)
			}
			for _, want := range tc.wantInError {
				if !strings.Contains(string(out), want) {
					t.Errorf("output does not contain %q:\n%s", want, out)
				}
			}
		})
	}
}
