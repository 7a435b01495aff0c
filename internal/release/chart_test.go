package release

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func objects(t *testing.T, yaml string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := DecodeObjects([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

const install = `
apiVersion: v1
kind: Namespace
metadata: {name: sluice-system}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: workloads.kueue.x-k8s.io
  annotations: {controller-gen.kubebuilder.io/version: v0.23.0}
spec:
  conversion:
    strategy: Webhook
    webhook:
      clientConfig:
        service: {name: sluice-webhook-service, namespace: sluice-system, path: /convert}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: sluice-validating-webhook-configuration}
webhooks:
- name: vjob.kueue.x-k8s.io
  clientConfig:
    service: {name: sluice-webhook-service, namespace: sluice-system}
- name: vpod.kueue.x-k8s.io
  clientConfig:
    service: {name: sluice-webhook-service, namespace: sluice-system}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: sluice-controller-manager, namespace: sluice-system}
spec:
  template:
    spec:
      containers:
      - {name: manager, image: sluice:latest}
      - {name: sidecar, image: other:1}
`

// The chart's generated templates: namespaced to the release, CRDs kept on
// uninstall, cert-manager's CA injection behind its value, and nothing of
// what the chart writes itself.
func TestChartTemplates(t *testing.T) {
	files, err := ChartTemplates(objects(t, install))
	if err != nil {
		t.Fatal(err)
	}
	crds, webhooks, rbac := string(files["crds.yaml"]), string(files["webhooks.yaml"]), string(files["rbac.yaml"])
	for name, data := range files {
		text := string(data)
		if strings.Contains(text, InstallNamespace) {
			t.Errorf("%s still names %s", name, InstallNamespace)
		}
		if strings.Contains(text, "kind: Deployment") || strings.Contains(text, "kind: Namespace") {
			t.Errorf("%s holds an object the chart writes itself", name)
		}
	}
	for _, want := range []string{"helm.sh/resource-policy: keep", "namespace: {{ .Release.Namespace }}",
		"{{- if .Values.certManager.enable }}", "controller-gen.kubebuilder.io/version: v0.23.0"} {
		if !strings.Contains(crds, want) {
			t.Errorf("crds.yaml lacks %q:\n%s", want, crds)
		}
	}
	if !strings.Contains(webhooks, "cert-manager.io/inject-ca-from: {{ .Release.Namespace }}/sluice-serving-cert") {
		t.Errorf("webhooks.yaml:\n%s", webhooks)
	}
	if !strings.Contains(webhooks, "{{- if or (not $frameworks) (has \"batch/job\" $frameworks) }}\n- clientConfig:") {
		t.Errorf("the Job webhook is not behind its integration:\n%s", webhooks)
	}
	// The kinds queued through their Pods need the pod webhooks.
	if !strings.Contains(webhooks, `{{- if or (not $frameworks) (has "pod" $frameworks) (has "deployment" $frameworks) (has "statefulset" $frameworks) (has "leaderworkerset.x-k8s.io/leaderworkerset" $frameworks) }}`) {
		t.Errorf("the Pod webhooks are not on with the kinds queued through Pods:\n%s", webhooks)
	}
	if strings.Contains(crds+webhooks, caInjectionMarker) {
		t.Error("the CA injection marker was left in")
	}
	if rbac != generatedHeader {
		t.Errorf("rbac.yaml of an install without roles:\n%s", rbac)
	}

	// Text Helm would take for a template is refused, not shipped.
	withBraces := objects(t, strings.Replace(install, "controller-gen.kubebuilder.io/version: v0.23.0", "note: '{{ oops }}'", 1))
	if _, err := ChartTemplates(withBraces); err == nil {
		t.Error("an object with {{ was turned into a template")
	}
}

func TestPinImage(t *testing.T) {
	objs := objects(t, install)
	if err := PinImage(objs, "r/sluice:v1@sha256:abc"); err != nil {
		t.Fatal(err)
	}
	data, err := EncodeObjects(objs)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "image: r/sluice:v1@sha256:abc") || !strings.Contains(string(data), "image: other:1") {
		t.Errorf("pinned:\n%s", data)
	}
	if err := PinImage(objects(t, "kind: ConfigMap\napiVersion: v1\nmetadata: {name: x}\n"), "x"); err == nil {
		t.Error("an install without the manager's container was pinned")
	}
}

func TestChartVersion(t *testing.T) {
	for version, want := range map[string]string{
		"v0.3.0": "0.3.0", "1.2.3-rc.1": "1.2.3-rc.1", "5931b1b": "0.0.0-5931b1b",
		"v0.3.0-4-g5931b1b-dirty": "0.3.0-4-g5931b1b-dirty", "dev": "0.0.0-dev", "a/b": "0.0.0-a-b",
	} {
		if got := ChartVersion(version); got != want {
			t.Errorf("ChartVersion(%q) = %q, want %q", version, got, want)
		}
	}
}

func TestStampChart(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("Chart.yaml", "name: sluice\nversion: 0.0.0-dev\nappVersion: dev\n")
	write("values.yaml", "image:\n  # pinned\n  digest: \"\"\n")
	digest := "sha256:" + strings.Repeat("ab", 32)
	if err := StampChart(dir, "bad version", digest); err == nil {
		t.Error("a version with a space was stamped")
	}
	if err := StampChart(dir, "v1.0.0", "sha256:short"); err == nil {
		t.Error("a malformed digest was stamped")
	}
	if err := StampChart(dir, "v1.0.0", digest); err != nil {
		t.Fatal(err)
	}
	chart, _ := os.ReadFile(filepath.Join(dir, "Chart.yaml"))
	values, _ := os.ReadFile(filepath.Join(dir, "values.yaml"))
	if string(chart) != "name: sluice\nversion: 1.0.0\nappVersion: \"v1.0.0\"\n" || string(values) != "image:\n  # pinned\n  digest: \""+digest+"\"\n" {
		t.Errorf("stamped:\n%s\n%s", chart, values)
	}
	// Stamped once: the lines are gone, a second stamp is an error.
	if err := StampChart(dir, "v1.0.0", digest); err == nil {
		t.Error("a stamped chart was stamped again")
	}
}

// The configuration's schema has the file's fields by their JSON names,
// inlined structs flattened, and refuses others.
func TestConfigurationSchema(t *testing.T) {
	s := ConfigurationSchema()
	props, _ := s["properties"].(schema)
	for _, field := range []string{"apiVersion", "kind", "namespace", "manageJobsWithoutQueueName", "leaderElection", "metrics", "integrations", "waitForPodsReady"} {
		if _, ok := props[field]; !ok {
			t.Errorf("no %s in the schema", field)
		}
	}
	if s["additionalProperties"] != false {
		t.Error("the schema takes unknown fields")
	}
	le := props["leaderElection"].(schema)["properties"].(schema)
	if le["leaseDuration"].(schema)["type"] != "string" || le["leaderElect"].(schema)["type"] != "boolean" {
		t.Errorf("leaderElection: %v", le)
	}
	if _, err := ValuesSchema(); err != nil {
		t.Fatal(err)
	}
}
