package devcluster

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
)

// builtAddon lays out what `make addons` puts in assets for name, with
// webhooks as its rendered webhook configurations.
func builtAddon(t *testing.T, assets, name, webhooks string) {
	t.Helper()
	dir := filepath.Join(assets, "addons", name)
	if err := os.MkdirAll(filepath.Join(dir, "crds"), 0o755); err != nil {
		t.Fatal(err)
	}
	for file, data := range map[string]string{"controller": "", "webhooks.yaml": webhooks} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestParseAddons(t *testing.T) {
	assets := t.TempDir()
	builtAddon(t, assets, "jobset", "")
	got, err := parseAddons([]string{"jobset", " jobset", ""}, assets)
	if err != nil || len(got) != 1 || got[0].name != "jobset" {
		t.Fatalf("jobset given twice: got %v, %v; want one addon", got, err)
	}
	if _, err := parseAddons([]string{"spark"}, assets); err == nil || !strings.Contains(err.Error(), `--with: unknown controller "spark" (known: jobset, lws, trainer, ray, mpi, appwrapper)`) {
		t.Errorf("unknown name: got %v", err)
	}
	if _, err := parseAddons([]string{"lws"}, assets); err == nil || !strings.Contains(err.Error(), "`make dev DEV_WITH=lws` builds it") {
		t.Errorf("an addon not built: got %v, want the make command that builds it", err)
	}
	if got, err := parseAddons(nil, assets); err != nil || len(got) != 0 {
		t.Errorf("no --with: got %v, %v", got, err)
	}
	builtAddon(t, assets, "trainer", "")
	if _, err := parseAddons([]string{"trainer"}, assets); err == nil || !strings.Contains(err.Error(), "--with trainer needs jobset too") {
		t.Errorf("the trainer without JobSet: got %v", err)
	}
	if got, err := parseAddons([]string{"trainer", "jobset"}, assets); err != nil || len(got) != 2 {
		t.Errorf("the trainer with JobSet: got %v, %v", got, err)
	}
	// KubeRay runs without webhooks: make addons renders none, and none
	// is asked for.
	ray := filepath.Join(assets, "addons", "ray")
	if err := os.MkdirAll(filepath.Join(ray, "crds"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := parseAddons([]string{"ray"}, assets); err == nil || !strings.Contains(err.Error(), "controller not found") {
		t.Errorf("KubeRay not built: got %v", err)
	}
	if err := os.WriteFile(filepath.Join(ray, "controller"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := parseAddons([]string{"ray"}, assets); err != nil || len(got) != 1 || !got[0].noWebhooks {
		t.Errorf("KubeRay without webhooks.yaml: got %v, %v", got, err)
	}
}

// KubeRay's operator takes flags, not a Configuration file: the same
// settings as the others' (no leader election, no metrics, health on the
// port sluice dev probes) and the local kubeconfig.
func TestFlagConfiguredAddonSpec(t *testing.T) {
	f := clusterFiles{assets: "/assets", dataDir: t.TempDir(), kubeconfig: "/data/kubeconfig"}
	i := slices.IndexFunc(knownAddons, func(a addon) bool { return a.name == "ray" })
	spec, err := addonSpec(knownAddons[i], f, addonServing{}, "127.0.0.1:9999")
	if err != nil {
		t.Fatal(err)
	}
	if spec.binary != "/assets/addons/ray/controller" || spec.name != "ray-controller" {
		t.Errorf("spec: %+v", spec)
	}
	args := strings.Join(spec.args, " ")
	for _, want := range []string{"--kubeconfig=/data/kubeconfig", "--enable-leader-election=false", "--metrics-addr=0", "--health-probe-bind-address="} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	probe := strings.TrimPrefix(spec.health, "http://")
	if !strings.Contains(args, "--health-probe-bind-address="+strings.TrimSuffix(probe, "/readyz")) {
		t.Errorf("health %s is not where the controller serves it: %s", spec.health, args)
	}
	entries, err := os.ReadDir(f.dataDir)
	if err != nil || len(entries) != 0 {
		t.Errorf("a flag-configured controller wrote %v (%v), want no configuration file", entries, err)
	}
}

const renderedWebhooks = `apiVersion: v1
kind: Service
metadata: {name: webhook-service, namespace: system}
spec: {ports: [{port: 443}]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: mutating-webhook-configuration}
webhooks:
- name: mpod.kb.io
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig: {service: {name: webhook-service, namespace: system, path: /mutate--v1-pod}}
  objectSelector: {matchExpressions: [{key: jobset.sigs.k8s.io/jobset-name, operator: Exists}]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: validating-webhook-configuration}
webhooks:
- name: vjobset.kb.io
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig: {service: {name: webhook-service, namespace: system, path: /validate-jobset}}
`

// The addon's own webhook configurations are kept (selectors and all) and
// pointed at its local port with the local CA; the Service is dropped.
func TestAddonWebhooksPointAtTheLocalServer(t *testing.T) {
	assets := t.TempDir()
	builtAddon(t, assets, "jobset", renderedWebhooks)
	serving := addonServing{host: "127.0.0.1", externalHost: "127.0.0.1", port: 9555, caData: []byte("CA")}
	objs, urls, err := addonWebhooks(knownAddons[0], assets, serving)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 {
		t.Fatalf("got %d objects, want the two webhook configurations", len(objs))
	}
	mutating, ok := objs[0].(*admissionv1.MutatingWebhookConfiguration)
	if !ok || mutating.Name != "jobset-mutating-webhook-configuration" {
		t.Fatalf("first object: %T %s", objs[0], objs[0].GetName())
	}
	cc := mutating.Webhooks[0].ClientConfig
	if cc.Service != nil || cc.URL == nil || *cc.URL != "https://127.0.0.1:9555/mutate--v1-pod" || string(cc.CABundle) != "CA" {
		t.Errorf("client config: %+v", cc)
	}
	if mutating.Webhooks[0].ObjectSelector == nil {
		t.Errorf("the project's object selector was lost")
	}
	if want := []string{"https://127.0.0.1:9555/mutate--v1-pod", "https://127.0.0.1:9555/validate-jobset"}; strings.Join(urls, " ") != strings.Join(want, " ") {
		t.Errorf("urls: got %v, want %v", urls, want)
	}

	builtAddon(t, assets, "lws", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n")
	if _, _, err := addonWebhooks(knownAddons[1], assets, serving); err == nil || !strings.Contains(err.Error(), "no webhook configuration") {
		t.Errorf("webhooks.yaml without webhooks: got %v", err)
	}
}

// A configuration file naming other frameworks still queues the kinds
// whose controllers run.
func TestAddonFrameworksAreTurnedOn(t *testing.T) {
	cfg := &configapi.Configuration{Integrations: &configapi.Integrations{Frameworks: []string{configapi.FrameworkBatchJob, configapi.FrameworkJobSet}}}
	withAddonFrameworks(cfg, knownAddons)
	want := []string{configapi.FrameworkBatchJob, configapi.FrameworkJobSet, configapi.FrameworkLeaderWorkerSet, configapi.FrameworkTrainJob,
		configapi.FrameworkRayJob, configapi.FrameworkRayCluster, configapi.FrameworkRayService, configapi.FrameworkMPIJob, configapi.FrameworkAppWrapper}
	if strings.Join(cfg.Integrations.Frameworks, ",") != strings.Join(want, ",") {
		t.Errorf("frameworks: got %v, want %v", cfg.Integrations.Frameworks, want)
	}
}

// A controller whose port is fixed is not started when the port is taken:
// the error names the addon and the port.
func TestFixedPortTaken(t *testing.T) {
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	err = checkFixedPort(addon{name: "mpi", fixedPort: port})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("--with mpi: its controller listens on port %d, which is taken", port)) {
		t.Errorf("taken port: got %v", err)
	}
	if err := checkFixedPort(addon{name: "ray"}); err != nil {
		t.Errorf("no fixed port: %v", err)
	}
}

// The Makefile builds exactly the addons --with takes: one it did not know
// would never be built by `make dev DEV_WITH=...`, and one it built that
// sluice dev does not take would be built for nothing.
func TestMakefileKnowsTheAddons(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "KNOWN_ADDONS :="); ok {
			listed = strings.Fields(rest)
		}
	}
	var known []string
	for _, a := range knownAddons {
		known = append(known, a.name)
		if !strings.Contains(string(data), "$(ADDONS_BIN)/"+a.name+"/controller:") {
			t.Errorf("the Makefile has no rule building the %s addon", a.name)
		}
	}
	if !slices.Equal(slices.Sorted(slices.Values(listed)), slices.Sorted(slices.Values(known))) {
		t.Errorf("the Makefile's KNOWN_ADDONS are %v, sluice dev --with takes %v", listed, known)
	}
}
