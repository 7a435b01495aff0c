// Package visibility asks sluice's visibility API for pending workloads
// through the real aggregation layer of kube-apiserver (front-proxy
// certificates, an APIService, delegated authentication and
// authorization), and checks that the positions it gives are the order in
// which the workloads are then admitted.
package visibility

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/config"
	"github.com/sluicehq/sluice/internal/devcluster"
	"github.com/sluicehq/sluice/internal/manager"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// summary is the wire format of a pendingworkloads answer, decoded
// without sluice's Go types so that a renamed field fails the test.
type summary struct {
	Kind, APIVersion string
	Items            []struct {
		Metadata struct {
			Name, Namespace string
			OwnerReferences []metav1.OwnerReference
		}
		Priority               int32
		LocalQueueName         string
		PositionInClusterQueue int32
		PositionInLocalQueue   int32
		Reason, Message        string
	}
}

func startClusterWithVisibility(t *testing.T) (*framework.Cluster, *rest.Config) {
	t.Helper()
	cluster, err := framework.StartCluster()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	cfg := cluster.ManagerConfig()
	ctx := t.Context()
	cluster.MustCreate(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: *cfg.Namespace}})
	if err := devcluster.RegisterLocalVisibility(ctx, cluster.Client, *cfg.Namespace, *cfg.VisibilityServer.BindPort); err != nil {
		t.Fatal(err)
	}
	stop, err := cluster.StartManager(cfg, manager.Options{EnableWebhooks: true, SeveralPerProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("the manager stopped with: %v", err)
		}
	})
	return cluster, cluster.RestConfig
}

// get asks the API server (which proxies to the manager) for path.
func get(ctx context.Context, cfg *rest.Config, path string) ([]byte, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return cs.CoreV1().RESTClient().Get().AbsPath(path).Do(ctx).Raw()
}

func decode(t *testing.T, data []byte) summary {
	t.Helper()
	var s summary
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("decoding %s: %v", data, err)
	}
	return s
}

func names(s summary) []string {
	var out []string
	for _, it := range s.Items {
		out = append(out, it.Metadata.Name)
	}
	return out
}

// One CPU, held by a blocker; four workloads wait in two LocalQueues. The
// visibility API lists them by priority then creation, numbers them in
// the ClusterQueue and in each LocalQueue, pages with offset and limit, in
// v1beta1 as in v1beta2, and says why the head waits. Freed one at a
// time, the CPU goes to them in exactly that order.
func TestPositionsAreTheAdmissionOrder(t *testing.T) {
	cluster, restConfig := startClusterWithVisibility(t)
	ctx := t.Context()
	ns := cluster.Namespace(t, nil)
	cq := framework.ClusterQueue("vis", "", framework.CPUQuota{Flavor: "default", Nominal: "1"})
	cluster.MustCreate(t, framework.Flavor("default", nil), cq, framework.LocalQueue(ns, "a", "vis"), framework.LocalQueue(ns, "b", "vis"))
	cluster.WaitActive(t, cq)
	blocker := framework.Workload(ns, "blocker", "a", 100, 1, "1")
	cluster.MustCreate(t, blocker)
	cluster.WaitAdmitted(t, blocker)
	// mid-1 comes before mid-2 whether they are created in the same second
	// (the name breaks the tie) or not (the queue time does).
	waiting := []*kueue.Workload{
		framework.Workload(ns, "low", "a", 0, 1, "1"),
		framework.Workload(ns, "mid-1", "a", 5, 1, "1"),
		framework.Workload(ns, "high", "b", 10, 1, "1"),
		framework.Workload(ns, "mid-2", "a", 5, 1, "1"),
	}
	for _, wl := range waiting {
		cluster.MustCreate(t, wl)
	}
	want := []string{"high", "mid-1", "mid-2", "low"}

	cqPath := "/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/vis/pendingworkloads"
	var got summary
	framework.Eventually(t, "the four waiting workloads listed, the head with its reason", func(ctx context.Context) (bool, error) {
		data, err := get(ctx, restConfig, cqPath)
		if err != nil {
			return false, err
		}
		got = decode(t, data)
		return slices.Equal(names(got), want) && got.Items[0].Reason == kueue.ReasonWaitingForQuota, nil
	})
	if got.Kind != "PendingWorkloadsSummary" || got.APIVersion != "visibility.kueue.x-k8s.io/v1beta2" {
		t.Errorf("kind %q apiVersion %q", got.Kind, got.APIVersion)
	}
	type place struct {
		lq         string
		priority   int32
		inCQ, inLQ int32
	}
	wantPlaces := []place{{"b", 10, 0, 0}, {"a", 5, 1, 0}, {"a", 5, 2, 1}, {"a", 0, 3, 2}}
	for i, it := range got.Items {
		if p := (place{it.LocalQueueName, it.Priority, it.PositionInClusterQueue, it.PositionInLocalQueue}); p != wantPlaces[i] {
			t.Errorf("%s: got %+v, want %+v", it.Metadata.Name, p, wantPlaces[i])
		}
		if it.Metadata.Namespace != ns {
			t.Errorf("%s: namespace %q", it.Metadata.Name, it.Metadata.Namespace)
		}
	}
	if m := got.Items[0].Message; m == "" {
		t.Error("the head's reason has no message")
	}

	// The same through kubectl get --raw, v1beta1, a LocalQueue, a page.
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cluster.WriteAdminKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	assets, err := framework.AssetsDir()
	if err != nil {
		t.Fatal(err)
	}
	lqPath := fmt.Sprintf("/apis/visibility.kueue.x-k8s.io/v1beta1/namespaces/%s/localqueues/a/pendingworkloads?offset=1&limit=1", ns)
	out, err := exec.CommandContext(ctx, filepath.Join(assets, "kubectl"), "get", "--raw", lqPath, "--kubeconfig", kubeconfig).Output()
	if err != nil {
		t.Fatalf("kubectl get --raw %s: %v", lqPath, err)
	}
	page := decode(t, out)
	if page.APIVersion != "visibility.kueue.x-k8s.io/v1beta1" || !slices.Equal(names(page), []string{"mid-2"}) ||
		page.Items[0].PositionInLocalQueue != 1 || page.Items[0].PositionInClusterQueue != 2 {
		t.Errorf("LocalQueue a, offset 1, limit 1: %s", out)
	}
	if _, err := get(ctx, restConfig, "/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/no-such-queue/pendingworkloads"); !apierrors.IsNotFound(err) {
		t.Errorf("an unknown ClusterQueue: got %v, want NotFound", err)
	}
	out, err = exec.CommandContext(ctx, filepath.Join(assets, "kubectl"), "get", "--raw", cqPath+"?limit=ten", "--kubeconfig", kubeconfig).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "BadRequest") || !strings.Contains(string(out), `query parameter limit: "ten" is not an integer`) {
		t.Errorf("limit=ten: %v, %s; want a BadRequest naming the parameter", err, out)
	}

	// Free the CPU one workload at a time: each goes to the next in line.
	holder := blocker
	for _, name := range want {
		if err := cluster.Client.Delete(ctx, holder); err != nil {
			t.Fatal(err)
		}
		next := waitingByName(waiting, name)
		cluster.WaitAdmitted(t, next)
		for _, other := range waiting {
			if other.Name == name {
				continue
			}
			wl := &kueue.Workload{}
			if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(other), wl); apierrors.IsNotFound(err) {
				continue
			} else if err != nil {
				t.Fatal(err)
			}
			if framework.Reserved(wl) {
				t.Fatalf("%s was admitted while %s was ahead of it", other.Name, name)
			}
		}
		holder = next
	}
}

func waitingByName(wls []*kueue.Workload, name string) *kueue.Workload {
	for _, wl := range wls {
		if wl.Name == name {
			return wl
		}
	}
	return nil
}

// The visibility server asks the API server who may read what: a user
// without a role is refused; the LocalQueue viewer role opens a
// LocalQueue's list and not a ClusterQueue's; the ClusterQueue viewer role
// opens that one.
func TestVisibilityIsAuthorizedByTheClusterRoles(t *testing.T) {
	cluster, restConfig := startClusterWithVisibility(t)
	ns := cluster.Namespace(t, nil)
	cq := framework.ClusterQueue("authz", "", framework.CPUQuota{Flavor: "default", Nominal: "1"})
	cluster.MustCreate(t, framework.Flavor("default", nil), cq, framework.LocalQueue(ns, "main", "authz"))
	cluster.WaitActive(t, cq)
	roles, err := config.UserRoles()
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range roles {
		cluster.MustCreate(t, role)
	}
	alice := rest.CopyConfig(restConfig)
	alice.Impersonate = rest.ImpersonationConfig{UserName: "alice"}
	lqPath := fmt.Sprintf("/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/%s/localqueues/main/pendingworkloads", ns)
	cqPath := "/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/authz/pendingworkloads"
	expect := func(what, path string, allowed bool) {
		t.Helper()
		framework.Eventually(t, what, func(ctx context.Context) (bool, error) {
			_, err := get(ctx, alice, path)
			if allowed {
				return err == nil, nil
			}
			return apierrors.IsForbidden(err), nil
		})
	}
	expect("alice without a role refused the LocalQueue", lqPath, false)
	expect("alice without a role refused the ClusterQueue", cqPath, false)

	cluster.MustCreate(t, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "alice-lq"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "sluice-pending-workloads-lq-viewer-role"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "alice"}}})
	expect("alice with the LocalQueue viewer role reads the LocalQueue", lqPath, true)
	expect("alice with the LocalQueue viewer role still refused the ClusterQueue", cqPath, false)

	cluster.MustCreate(t, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-cq"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "sluice-pending-workloads-cq-viewer-role"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "alice"}}})
	expect("alice with the ClusterQueue viewer role reads the ClusterQueue", cqPath, true)
}
