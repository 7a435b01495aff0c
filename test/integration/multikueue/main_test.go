// Package multikueue tests MultiKueue on three real control planes: a
// manager cluster and two worker clusters, each with its own sluice
// manager (in this process). There is no Job controller: tests write the
// worker Jobs' status the way it would, and check what reaches the
// manager.
package multikueue

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	"github.com/sluicehq/sluice/internal/manager"
	"github.com/sluicehq/sluice/test/integration/framework"
)

var (
	// cluster is the manager cluster.
	cluster *framework.Cluster
	// workers are the worker clusters by MultiKueueCluster name, and
	// their kubeconfigs.
	workers     = map[string]*framework.Cluster{}
	kubeconfigs = map[string][]byte{}
)

// workerLostTimeout is short, so that the test of a lost worker is.
const workerLostTimeout = 4 * time.Second

var workerNames = []string{"worker-a", "worker-b"}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	opts := manager.Options{EnableWebhooks: true, SeveralPerProcess: true, MultiKueueProbeInterval: 500 * time.Millisecond}
	for _, name := range workerNames {
		w, err := framework.StartCluster()
		if err != nil {
			fmt.Fprintln(os.Stderr, "starting worker", name, err)
			return 1
		}
		defer func() { _ = w.Stop() }()
		stop, err := w.StartManager(w.ManagerConfig(), opts)
		if err != nil {
			fmt.Fprintln(os.Stderr, "starting the manager of worker", name, err)
			return 1
		}
		defer func() { _ = stop() }()
		if kubeconfigs[name], err = w.AdminKubeconfig(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		workers[name] = w
	}
	prepare := func(c *framework.Cluster) error {
		ns := *c.ManagerConfig().Namespace
		for _, name := range workerNames {
			if err := c.PutSecret(context.Background(), ns, name, "kubeconfig", kubeconfigs[name]); err != nil {
				return err
			}
		}
		return nil
	}
	return framework.RunSuitePrepared(m, &cluster, opts, prepare, func(cfg *configapi.Configuration) {
		cfg.MultiKueue.WorkerLostTimeout = &metav1.Duration{Duration: workerLostTimeout}
		cfg.MultiKueue.GCInterval = &metav1.Duration{Duration: time.Second}
	})
}
