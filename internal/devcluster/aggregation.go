package devcluster

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// frontProxyUser is the name in the API server's front-proxy client
// certificate: the identity it proxies aggregated requests with.
const frontProxyUser = "front-proxy-client"

// EnableAggregation makes env's API server an aggregation layer that can
// proxy to extension API servers (sluice's visibility server): a
// front-proxy CA and client certificate are written to dir, and the API
// server is started with them, as kubeadm's clusters are. Call before
// env.Start.
func EnableAggregation(env *envtest.Environment, dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating the front-proxy directory: %w", err)
	}
	caFile, certFile, keyFile := filepath.Join(dir, "front-proxy-ca.crt"), filepath.Join(dir, "front-proxy-client.crt"), filepath.Join(dir, "front-proxy-client.key")
	if err := writeFrontProxyCerts(caFile, certFile, keyFile); err != nil {
		return err
	}
	if env.ControlPlane.APIServer == nil {
		env.ControlPlane.APIServer = &envtest.APIServer{}
	}
	args := env.ControlPlane.APIServer.Configure()
	args.Set("requestheader-client-ca-file", caFile)
	args.Set("requestheader-allowed-names", frontProxyUser)
	args.Set("requestheader-username-headers", "X-Remote-User")
	args.Set("requestheader-group-headers", "X-Remote-Group")
	args.Set("requestheader-extra-headers-prefix", "X-Remote-Extra-")
	args.Set("proxy-client-cert-file", certFile)
	args.Set("proxy-client-key-file", keyFile)
	return nil
}

// writeFrontProxyCerts makes a CA and a client certificate it signs.
func writeFrontProxyCerts(caFile, certFile, keyFile string) error {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generating the front-proxy CA key: %w", err)
	}
	caTemplate := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "front-proxy-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(10 * 365 * 24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("signing the front-proxy CA: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return fmt.Errorf("reading the front-proxy CA: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generating the front-proxy client key: %w", err)
	}
	template := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: frontProxyUser},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, template, ca, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("signing the front-proxy client certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("encoding the front-proxy client key: %w", err)
	}
	for file, block := range map[string]*pem.Block{
		caFile: {Type: "CERTIFICATE", Bytes: caDER}, certFile: {Type: "CERTIFICATE", Bytes: der}, keyFile: {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(file, pem.EncodeToMemory(block), 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", file, err)
		}
	}
	return nil
}

// LocalVisibilityServiceName is the Service that points the visibility
// APIServices of a local cluster at a manager running on this machine.
const LocalVisibilityServiceName = "sluice-visibility-server"

// RegisterLocalVisibility points visibility.kueue.x-k8s.io at a manager
// serving it on localhost:port: an ExternalName Service "localhost" (the
// aggregation layer dials an ExternalName directly; a local cluster has no
// Service proxy) and the two APIServices. The manager's certificate is
// not for the Service's name, so the APIServices skip verification, as
// Kueue's default install does; installed clusters carry the CA instead.
func RegisterLocalVisibility(ctx context.Context, c client.Client, namespace string, port int32) error {
	objs := []*unstructured.Unstructured{{Object: map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": LocalVisibilityServiceName, "namespace": namespace},
		"spec": map[string]any{"type": "ExternalName", "externalName": "localhost",
			"ports": []any{map[string]any{"name": "https", "port": int64(port)}}},
	}}}
	for _, version := range []string{"v1beta1", "v1beta2"} {
		objs = append(objs, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
			"metadata": map[string]any{"name": version + ".visibility.kueue.x-k8s.io"},
			"spec": map[string]any{
				"group": "visibility.kueue.x-k8s.io", "version": version,
				"groupPriorityMinimum": int64(100), "versionPriority": int64(100),
				"insecureSkipTLSVerify": true,
				"service":               map[string]any{"name": LocalVisibilityServiceName, "namespace": namespace, "port": int64(port)},
			},
		}})
	}
	for _, obj := range objs {
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner("sluice-dev"), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	return nil
}
