// Package manager tests the manager's own plumbing on a real API server:
// self-managed webhook certificates and readiness, the frameworks it
// refuses once served, profiling.
package manager

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluicehq/sluice/config"
	"github.com/sluicehq/sluice/internal/manager"
	"github.com/sluicehq/sluice/test/integration/framework"
)

func TestManagerRotatesItsOwnWebhookCertificates(t *testing.T) {
	cluster, err := framework.StartCluster()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	ctx := context.Background()
	c := cluster.Client

	cfg := cluster.ManagerConfig()
	cfg.InternalCertManagement.Enable = ptr.To(true)
	cfg.Webhook.Host = "127.0.0.1"
	cfg.Webhook.Port = ptr.To(freePort(t))
	cfg.Webhook.CertDir = t.TempDir()
	healthAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cfg.Health.HealthProbeBindAddress = healthAddr

	// What a kustomize install creates: the namespace and an empty Secret.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: *cfg.Namespace}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: *cfg.InternalCertManagement.WebhookSecretName}}
	for _, obj := range []client.Object{ns, secret} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	envtestCA := webhookCABundle(t, c)

	stop, err := cluster.StartManager(cfg, manager.Options{EnableWebhooks: true, SeveralPerProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("manager: %v", err)
		}
	})

	var ca []byte
	framework.Eventually(t, "the Secret to hold a CA and a serving certificate", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(secret), secret); err != nil {
			return false, err
		}
		ca = secret.Data["ca.crt"]
		return len(ca) > 0 && len(secret.Data["tls.crt"]) > 0 && len(secret.Data["tls.key"]) > 0, nil
	})
	framework.Eventually(t, "the webhook configuration to carry the new CA", func(ctx context.Context) (bool, error) {
		bundle := webhookCABundle(t, c)
		return bytes.Equal(bundle, ca) && !bytes.Equal(bundle, envtestCA), nil
	})
	// Until the certificates are mounted the webhooks can't serve: not ready.
	framework.Eventually(t, "/readyz to answer not ready", func(ctx context.Context) (bool, error) {
		resp, err := http.Get("http://" + healthAddr + "/readyz")
		if err != nil {
			return false, err
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("ready before the webhook certificates were mounted")
		}
		return true, nil
	})
	// In a cluster the kubelet mounts the Secret into the cert dir; the
	// rotator waits for that before the webhooks start. Do the kubelet's part.
	for name, data := range secret.Data {
		if err := os.WriteFile(filepath.Join(cfg.Webhook.CertDir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	framework.Eventually(t, "/readyz to pass", func(ctx context.Context) (bool, error) {
		resp, err := http.Get("http://" + healthAddr + "/readyz")
		if err != nil {
			return false, err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false, fmt.Errorf("status %d", resp.StatusCode)
		}
		return true, nil
	})

	// The webhook server presents a certificate for its Service, signed by
	// the CA the API server was given.
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		t.Fatal("ca.crt is not PEM")
	}
	serverName := fmt.Sprintf("%s.%s.svc", *cfg.InternalCertManagement.WebhookServiceName, *cfg.Namespace)
	conn, err := tls.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", *cfg.Webhook.Port), &tls.Config{RootCAs: pool, ServerName: serverName})
	if err != nil {
		t.Fatalf("TLS handshake with the webhook server as %s: %v", serverName, err)
	}
	conn.Close()
}

func webhookCABundle(t *testing.T, c client.Client) []byte {
	t.Helper()
	vwc := &admissionv1.ValidatingWebhookConfiguration{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: config.ValidatingWebhookConfigurationName}, vwc); err != nil {
		t.Fatal(err)
	}
	return vwc.Webhooks[0].ClientConfig.CABundle
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
