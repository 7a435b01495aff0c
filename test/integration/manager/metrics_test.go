package manager

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/sluicehq/sluice/internal/manager"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// The metrics are served over HTTPS to whoever the API server says may get
// /metrics: no token is refused (401), a service account without the
// shipped metrics-reader ClusterRole is forbidden (403), a made-up token is
// refused, one bound to the role reads the series.
func TestMetricsNeedAnAuthorizedToken(t *testing.T) {
	cluster, err := framework.StartClusterWithoutWebhooks()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	ctx := t.Context()
	cs := kubernetes.NewForConfigOrDie(cluster.RestConfig)

	role := shippedMetricsReaderRole(t)
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	readerToken := serviceAccountToken(t, cs, "scraper")
	strangerToken := serviceAccountToken(t, cs, "stranger")
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "scraper-reads-metrics"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: "scraper"}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	cfg := cluster.ManagerConfig()
	cfg.Metrics.BindAddress = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	stop, err := cluster.StartManager(cfg, manager.Options{SeveralPerProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stop() })
	url := "https://" + cfg.Metrics.BindAddress + "/metrics"

	framework.Eventually(t, "the reader's scrape to return sluice's metrics", func(ctx context.Context) (bool, error) {
		status, body, err := scrape(ctx, url, readerToken)
		if err != nil || status != http.StatusOK {
			return false, fmt.Errorf("status %d, err %v", status, err)
		}
		return strings.Contains(body, "controller_runtime_reconcile_total"), nil
	})
	for _, tc := range []struct {
		who, token string
		want       int
	}{
		{"no token", "", http.StatusUnauthorized},
		// controller-runtime's filter answers a failed TokenReview with
		// 500; what matters is that nothing is served.
		{"a token that is not one", "not-a-token", 0},
		{"a service account without the role", strangerToken, http.StatusForbidden},
	} {
		status, body, err := scrape(ctx, url, tc.token)
		if err != nil {
			t.Fatalf("%s: %v", tc.who, err)
		}
		if (tc.want != 0 && status != tc.want) || status < http.StatusBadRequest {
			t.Errorf("%s: status %d, want %d", tc.who, status, tc.want)
		}
		if strings.Contains(body, "controller_runtime_reconcile_total") {
			t.Errorf("%s read the metrics", tc.who)
		}
	}
	// Plain HTTP on the same port is not served.
	if status, _, err := scrape(ctx, "http://"+cfg.Metrics.BindAddress+"/metrics", readerToken); err == nil && status == http.StatusOK {
		t.Error("the metrics answered over plain HTTP")
	}
}

// shippedMetricsReaderRole is config/rbac/metrics_reader_role.yaml, under
// a name of this test's.
func shippedMetricsReaderRole(t *testing.T) *rbacv1.ClusterRole {
	t.Helper()
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "config", "rbac", "metrics_reader_role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.UnmarshalStrict(data, role); err != nil {
		t.Fatal(err)
	}
	role.Name = "test-metrics-reader"
	return role
}

// serviceAccountToken creates a service account in default and a token for
// it through the TokenRequest API.
func serviceAccountToken(t *testing.T, cs kubernetes.Interface, name string) string {
	t.Helper()
	ctx := t.Context()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	if _, err := cs.CoreV1().ServiceAccounts("default").Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts("default").CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a token for %s: %v", name, err)
	}
	return tr.Status.Token
}

// scrape GETs url with the bearer token (none if empty); the manager's
// certificate is self-signed, so it is not verified.
func scrape(ctx context.Context, url, token string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // a self-signed test certificate
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}
