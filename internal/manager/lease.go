package manager

import (
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/clock"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	"github.com/sluicehq/sluice/internal/apply"
)

// newLeaseFence builds the Lease lock controller-runtime would build (same
// name, namespace, identity scheme and client timeout), wrapped in the
// fence that tells the apply layer until when it may write.
func newLeaseFence(restConfig *rest.Config, cfg *configapi.Configuration) (*apply.LeaseFence, error) {
	le := cfg.LeaderElection
	namespace := le.ResourceNamespace
	if namespace == "" {
		namespace = *cfg.Namespace
	}
	host, err := os.Hostname()
	if err != nil {
		return nil, fmt.Errorf("naming this manager for leader election: %w", err)
	}
	lockConfig := rest.AddUserAgent(rest.CopyConfig(restConfig), "leader-election")
	// A hung request must not outlive the renew deadline.
	lockConfig.Timeout = max(le.RenewDeadline.Duration/2, time.Second)
	core, err := corev1client.NewForConfig(lockConfig)
	if err != nil {
		return nil, fmt.Errorf("building the leader election client: %w", err)
	}
	coordination, err := coordinationv1client.NewForConfig(lockConfig)
	if err != nil {
		return nil, fmt.Errorf("building the leader election client: %w", err)
	}
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, namespace, le.ResourceName, core, coordination,
		resourcelock.ResourceLockConfig{Identity: host + "_" + string(uuid.NewUUID())})
	if err != nil {
		return nil, fmt.Errorf("building the leader election lock: %w", err)
	}
	return apply.NewLeaseFence(lock, clock.RealClock{}, le.RenewDeadline.Duration), nil
}

// fenceLock is the lock to hand controller-runtime: nil (it builds none)
// without leader election.
func fenceLock(f *apply.LeaseFence) resourcelock.Interface {
	if f == nil {
		return nil
	}
	return f
}
