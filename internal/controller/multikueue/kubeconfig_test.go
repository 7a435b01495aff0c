package multikueue

import (
	"errors"
	"strings"
	"testing"
)

const base = `apiVersion: v1
kind: Config
clusters:
- name: w
  cluster:
    server: https://worker.example.com
    certificate-authority-data: ZmFrZQ==
users:
- name: u
  user:
    USER
contexts:
- name: c
  context: {cluster: w, user: u}
current-context: c
`

func TestInsecureKubeconfigsAreRefused(t *testing.T) {
	for name, user := range map[string]string{
		"exec":          "exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh}",
		"auth-provider": "auth-provider: {name: gcp}",
		"tokenFile":     "tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token",
		"client-key":    "client-key: /etc/key.pem",
	} {
		t.Run(name, func(t *testing.T) {
			data := []byte(strings.Replace(base, "USER", user, 1))
			_, err := restConfigFrom(data, false)
			if !errors.Is(err, errInsecure) || !strings.Contains(err.Error(), name) {
				t.Fatalf("err = %v, want it refused naming %s", err, name)
			}
			if strings.Contains(err.Error(), "/bin/sh") || strings.Contains(err.Error(), "/etc/key.pem") {
				t.Fatalf("err %q quotes the kubeconfig", err)
			}
			if _, err := restConfigFrom(data, true); errors.Is(err, errInsecure) {
				t.Fatalf("allowed by the gate, still refused: %v", err)
			}
		})
	}
	if _, err := restConfigFrom([]byte(strings.Replace(base, "USER", "token: secret-token", 1)), false); err != nil {
		t.Fatalf("an embedded token is refused: %v", err)
	}
}

func TestUnparsableKubeconfigIsNotQuoted(t *testing.T) {
	_, err := restConfigFrom([]byte("token: super-secret\n\t- :"), false)
	if err == nil || strings.Contains(err.Error(), "super-secret") {
		t.Fatalf("err = %v", err)
	}
}
