package visibility

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluicehq/sluice/internal/manager"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// Only the leader knows the queues, so the visibility Service selects the
// Pod labelled leader. A starting replica takes a stale label off its own
// Pod (a restarted container of a Pod that led); the leader labels its
// Pod; when it stops, it takes its label off and the replica that takes
// over labels its own.
func TestTheLeaderLabelsItsPod(t *testing.T) {
	cluster, err := framework.StartClusterWithoutWebhooks()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	cfg := cluster.ManagerConfig()
	ns := *cfg.Namespace
	pod := func(name string, labels map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: "sluice"}}}}
	}
	cluster.MustCreate(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		pod("first", nil), pod("second", map[string]string{manager.LeaderLabel: "true"}))
	labelled := func(name string, want bool) {
		t.Helper()
		framework.Eventually(t, name+" labelled leader: "+map[bool]string{true: "yes", false: "no"}[want], func(ctx context.Context) (bool, error) {
			p := &corev1.Pod{}
			if err := cluster.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
				return false, err
			}
			return (p.Labels[manager.LeaderLabel] == "true") == want, nil
		})
	}
	start := func(name string) func() error {
		t.Helper()
		c := cluster.ManagerConfig()
		c.LeaderElection.LeaderElect = ptr.To(true)
		stop, err := cluster.StartManager(c, manager.Options{SeveralPerProcess: true, PodName: name, PodNamespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		return stop
	}
	stopFirst := start("first")
	labelled("first", true)
	stopSecond := start("second")
	t.Cleanup(func() { _ = stopSecond() })
	labelled("second", false)
	labelled("first", true)
	if err := stopFirst(); err != nil {
		t.Fatalf("stopping the first manager: %v", err)
	}
	labelled("first", false)
	labelled("second", true)
}
