package manager

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/manager"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// Of the install's two replicas, the one that does not lead is ready and
// serves the webhooks all the same: the API server's webhook calls are
// answered by whichever replica the Service picks. Here the webhook
// configurations reach only the standby.
func TestStandbyReplicaIsReadyAndServesWebhooks(t *testing.T) {
	cluster, err := framework.StartCluster()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	c := cluster.Client
	ctx := context.Background()

	leaderCfg := cluster.ManagerConfig()
	leaderCfg.LeaderElection.LeaderElect = ptr.To(true)
	cluster.MustCreate(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: *leaderCfg.Namespace}})
	// The leader's webhooks listen where nothing routes to them.
	leaderCfg.Webhook.Port = ptr.To(freePort(t))
	stopLeader, err := cluster.StartManager(leaderCfg, manager.Options{EnableWebhooks: true, SeveralPerProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stopLeader() })
	lease := &coordinationv1.Lease{}
	leaseKey := client.ObjectKey{Namespace: *leaderCfg.Namespace, Name: leaderCfg.LeaderElection.ResourceName}
	framework.Eventually(t, "the first manager to lead", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, leaseKey, lease); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != "", nil
	})
	leader := *lease.Spec.HolderIdentity

	standbyCfg := cluster.ManagerConfig()
	standbyCfg.LeaderElection.LeaderElect = ptr.To(true)
	healthAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	standbyCfg.Health.HealthProbeBindAddress = healthAddr
	stopStandby, err := cluster.StartManager(standbyCfg, manager.Options{EnableWebhooks: true, SeveralPerProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stopStandby() })
	framework.Eventually(t, "the standby to be ready", func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+healthAddr+"/readyz", nil)
		if err != nil {
			return false, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil
		}
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	// A queued Job is suspended by the mutating webhook, which only the
	// standby serves here.
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "queued", Labels: map[string]string{kueue.QueueNameLabel: "main"}},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
	if err := c.Create(ctx, job, client.DryRunAll); err != nil {
		t.Fatal(err)
	}
	if job.Spec.Suspend == nil || !*job.Spec.Suspend {
		t.Error("the standby's webhook did not suspend a queued Job")
	}
	if err := c.Get(ctx, leaseKey, lease); err != nil {
		t.Fatal(err)
	}
	if *lease.Spec.HolderIdentity != leader {
		t.Errorf("the lease moved to %s while the first manager ran", *lease.Spec.HolderIdentity)
	}
}
