// Package podsready tests waitForPodsReady on a real API server: the
// PodsReady condition computed from a Job's pods, eviction with reason
// PodsReadyTimeout, requeueing with backoff until backoffLimitCount and
// then deactivation, the recovery timeout, and blockAdmission. There is
// no Job controller here: tests write the Jobs' status the way it would.
package podsready

import (
	"os"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	"github.com/sluicehq/sluice/internal/manager"
	"github.com/sluicehq/sluice/test/integration/framework"
)

var cluster *framework.Cluster

// timeout is waitForPodsReady.timeout (and recoveryTimeout) here.
const timeout = 10 * time.Second

func TestMain(m *testing.M) {
	os.Exit(framework.RunSuiteWith(m, &cluster, manager.Options{EnableWebhooks: true}, func(cfg *configapi.Configuration) {
		cfg.WaitForPodsReady = &configapi.WaitForPodsReady{
			Timeout: metav1.Duration{Duration: timeout}, RecoveryTimeout: &metav1.Duration{Duration: timeout},
			BlockAdmission: ptr.To(true),
			RequeuingStrategy: &configapi.RequeuingStrategy{Timestamp: ptr.To(configapi.EvictionTimestamp),
				BackoffLimitCount: ptr.To[int32](1), BackoffBaseSeconds: ptr.To[int32](1), BackoffMaxSeconds: ptr.To[int32](2)},
		}
	}))
}
