package rbac

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/apis/scheme"
	"github.com/sluicehq/sluice/config"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// The roles for people who use queues, as installed (config/rbac,
// prefixed sluice-) and aggregated by kube-controller-manager's
// clusterrole-aggregation controller: a namespace user with the built-in
// edit role sees the LocalQueues and Workloads of their namespace and
// cannot touch ClusterQueues; batch-user-role lets a user run Jobs and see
// queues; batch-admin-role manages ClusterQueues.
func TestUserRoles(t *testing.T) {
	ctx := context.Background()
	installUserRoles(t)
	runAggregationController(t)
	ns, other := cluster.Namespace(t, nil), cluster.Namespace(t, nil)
	bind := func(user, role string, namespace string) {
		subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
		ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}
		if namespace == "" {
			cluster.MustCreate(t, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: cluster.Unique(user)}, Subjects: subjects, RoleRef: ref})
			return
		}
		cluster.MustCreate(t, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: user}, Subjects: subjects, RoleRef: ref})
	}
	bind("alice", "edit", ns)
	bind("bob", "sluice-batch-user-role", ns)
	bind("carol", "sluice-batch-admin-role", "")
	alice, bob, carol := as(t, "alice"), as(t, "bob"), as(t, "carol")

	for _, user := range []struct {
		name string
		c    client.Client
	}{{"alice (edit)", alice}, {"bob (batch user)", bob}} {
		framework.Eventually(t, user.name+" to list LocalQueues and Workloads in "+ns, func(ctx context.Context) (bool, error) {
			if err := user.c.List(ctx, &kueue.LocalQueueList{}, client.InNamespace(ns)); err != nil {
				return false, err
			}
			return true, user.c.List(ctx, &kueue.WorkloadList{}, client.InNamespace(ns))
		})
		mustBeForbidden(t, user.name+" listing ClusterQueues", user.c.List(ctx, &kueue.ClusterQueueList{}))
		mustBeForbidden(t, user.name+" creating a ClusterQueue", user.c.Create(ctx, framework.ClusterQueue(cluster.Unique("cq"), "", framework.CPUQuota{Flavor: "any", Nominal: "1"}), client.DryRunAll))
		mustBeForbidden(t, user.name+" listing LocalQueues of another namespace", user.c.List(ctx, &kueue.LocalQueueList{}, client.InNamespace(other)))
	}
	mustBeForbidden(t, "alice (edit) creating a LocalQueue", alice.Create(ctx, framework.LocalQueue(ns, "mine", "cq"), client.DryRunAll))
	framework.Eventually(t, "bob to create a Job in "+ns, func(ctx context.Context) (bool, error) {
		return true, bob.Create(ctx, job(ns, "bobs", "lq", ""), client.DryRunAll)
	})
	mustBeForbidden(t, "bob (batch user) creating a Job elsewhere", bob.Create(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "j"}}, client.DryRunAll))
	framework.Eventually(t, "carol (batch admin) to create a ClusterQueue", func(ctx context.Context) (bool, error) {
		return true, carol.Create(ctx, framework.ClusterQueue(cluster.Unique("cq"), "", framework.CPUQuota{Flavor: "any", Nominal: "1"}), client.DryRunAll)
	})
}

// installUserRoles creates the ClusterRoles of config/rbac/user_roles.yaml
// under the names the install gives them.
func installUserRoles(t *testing.T) {
	t.Helper()
	roles, err := config.UserRoles()
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range roles {
		cluster.MustCreate(t, role)
	}
}

// runAggregationController runs kube-controller-manager with the one
// controller that fills aggregated ClusterRoles (envtest runs none).
func runAggregationController(t *testing.T) {
	t.Helper()
	assets, err := framework.AssetsDir()
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "admin.kubeconfig")
	if err := cluster.WriteAdminKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := exec.Command(filepath.Join(assets, "kube-controller-manager"), "--kubeconfig="+kubeconfig,
		"--controllers=clusterrole-aggregation-controller", "--leader-elect=false", "--secure-port=0")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("kube-controller-manager:\n%s", out.String())
		}
	})
}

func as(t *testing.T, user string) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(cluster.RestConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	cfg.QPS = -1
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustBeForbidden(t *testing.T, what string, err error) {
	t.Helper()
	if !apierrors.IsForbidden(err) {
		t.Errorf("%s: got %v, want Forbidden", what, err)
	}
}
