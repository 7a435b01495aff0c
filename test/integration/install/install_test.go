package install

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configfile "github.com/sluicehq/sluice/apis/config"
	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/release"
)

// `kubectl apply --server-side -f dist/sluice.yaml` on a cluster without
// sluice: every object is accepted, the manager's image is the pinned one
// and its pod template is valid.
func TestReleaseManifestAppliesServerSide(t *testing.T) {
	e := newEnv(t)
	image := "ghcr.io/sluicehq/sluice:v0.1.0@" + testDigest
	manifest, err := release.ReleaseManifest(filepath.Join(e.root, "config", "default"), image)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sluice.yaml")
	if err := os.WriteFile(path, manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	e.kubectl("apply", "--server-side", "-f", path)
	objs := e.allExist(string(manifest))
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.GetKind()]++
	}
	for _, kind := range []string{"CustomResourceDefinition", "Namespace", "ClusterRole", "Deployment", "Service", "PodDisruptionBudget",
		"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "ServiceAccount", "Secret", "ConfigMap"} {
		if kinds[kind] == 0 {
			t.Errorf("the release manifest has no %s", kind)
		}
	}
	d := e.podTemplateIsValid("sluice-system")
	if got := d.Spec.Template.Spec.Containers[0].Image; got != image {
		t.Errorf("the manager runs %s, want %s", got, image)
	}
	if *d.Spec.Replicas != 2 {
		t.Errorf("%d replicas, want 2", *d.Spec.Replicas)
	}
	// Applying it again (an upgrade to the same release) changes nothing.
	e.kubectl("apply", "--server-side", "-f", path)
	again := e.podTemplateIsValid("sluice-system")
	if again.Generation != d.Generation {
		t.Errorf("a second apply of the same manifest changed the Deployment (generation %d to %d)", d.Generation, again.Generation)
	}
}

// helm install on a cluster without sluice, then an upgrade to a new chart
// version with other values, then helm uninstall. The upgrade keeps the
// queues and workloads (same objects, same UIDs); the uninstall removes the
// manager and its webhooks and keeps the CustomResourceDefinitions, so
// the queues survive it too.
func TestHelmInstallUpgradeUninstall(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.cluster.Client
	const ns = "sluice-system"

	v1 := stampedChart(t, "v0.1.0")
	e.helm("install", "sluice", v1, "-n", ns, "--create-namespace")
	manifest := e.helm("get", "manifest", "sluice", "-n", ns)
	e.allExist(manifest)
	d := e.podTemplateIsValid(ns)
	if *d.Spec.Replicas != 2 || d.Spec.Template.Spec.Containers[0].Image != "ghcr.io/sluicehq/sluice@"+testDigest {
		t.Errorf("deployment: %d replicas of %s", *d.Spec.Replicas, d.Spec.Template.Spec.Containers[0].Image)
	}
	pdb := &policyv1.PodDisruptionBudget{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sluice-controller-manager"}, pdb); err != nil || pdb.Spec.MinAvailable.IntValue() != 1 {
		t.Errorf("the PodDisruptionBudget: %v %v", pdb.Spec.MinAvailable, err)
	}
	vwc := &admissionv1.ValidatingWebhookConfiguration{}
	if err := c.Get(ctx, client.ObjectKey{Name: "sluice-validating-webhook-configuration"}, vwc); err != nil {
		t.Fatal(err)
	}
	for _, w := range vwc.Webhooks {
		if w.ClientConfig.Service == nil || w.ClientConfig.Service.Namespace != ns || w.TimeoutSeconds == nil {
			t.Errorf("webhook %s: client %+v, timeout %v", w.Name, w.ClientConfig.Service, w.TimeoutSeconds)
		}
	}

	// No manager runs behind the webhooks here (the API server cannot
	// reach a Service without kube-proxy), so the queues are written with
	// the webhook configurations out of the way; the upgrade puts them back.
	for _, obj := range []client.Object{vwc, &admissionv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "sluice-mutating-webhook-configuration"}}} {
		if err := c.Delete(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	queues := writeQueues(t, c)

	v2 := stampedChart(t, "v0.2.0")
	e.helm("upgrade", "sluice", v2, "-n", ns, "--set", "replicas=3")
	e.allExist(e.helm("get", "manifest", "sluice", "-n", ns))
	if err := c.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil || *d.Spec.Replicas != 3 {
		t.Errorf("after the upgrade: %v replicas, %v", d.Spec.Replicas, err)
	}
	stillThere(t, c, queues, "the upgrade")

	e.helm("uninstall", "sluice", "-n", ns)
	if err := c.Get(ctx, client.ObjectKeyFromObject(d), d); err == nil {
		t.Error("the Deployment is still there after helm uninstall")
	}
	if err := c.Get(ctx, client.ObjectKey{Name: "sluice-validating-webhook-configuration"}, vwc); err == nil {
		t.Error("the webhooks are still there after helm uninstall")
	}
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	if err := c.Get(ctx, client.ObjectKey{Name: "workloads.kueue.x-k8s.io"}, crd); err != nil || crd.GetDeletionTimestamp() != nil {
		t.Errorf("the Workload CRD after helm uninstall: %v (deleting: %v)", err, crd.GetDeletionTimestamp())
	}
	stillThere(t, c, queues, "helm uninstall")
}

// writeQueues creates a flavor, a ClusterQueue, a LocalQueue and a
// Workload, and returns them as created (with their UIDs).
func writeQueues(t *testing.T, c client.Client) []client.Object {
	t.Helper()
	ctx := context.Background()
	team := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}
	flavor := &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	cq := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}, Spec: kueue.ClusterQueueSpec{
		NamespaceSelector: &metav1.LabelSelector{},
		ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
			Flavors: []kueue.FlavorQuotas{{Name: "default", Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse("10")}}}}}},
	}}
	lq := &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Name: "main", Namespace: "team-a"}, Spec: kueue.LocalQueueSpec{ClusterQueue: "team-a"}}
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Name: "job-1", Namespace: "team-a"}, Spec: kueue.WorkloadSpec{
		QueueName: "main",
		PodSets: []kueue.PodSet{{Name: "main", Count: 1, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "c", Image: "busybox"}},
		}}}},
	}}
	objs := []client.Object{team, flavor, cq, lq, wl}
	for _, obj := range objs {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatalf("%T %s: %v", obj, obj.GetName(), err)
		}
	}
	return objs[1:]
}

func stillThere(t *testing.T, c client.Client, objs []client.Object, after string) {
	t.Helper()
	for _, obj := range objs {
		live := obj.DeepCopyObject().(client.Object)
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), live); err != nil {
			t.Errorf("%T %s after %s: %v", obj, obj.GetName(), after, err)
			continue
		}
		if live.GetUID() != obj.GetUID() {
			t.Errorf("%T %s was replaced during %s", obj, obj.GetName(), after)
		}
	}
}

// The chart lints clean (strict) and renders what the kustomize install has (bar the namespace,
// which the release's is), and a configuration the manager reads.
func TestChartMatchesTheKustomizeInstall(t *testing.T) {
	root := repoRoot(t)
	helm(t, false, "lint", "--strict", filepath.Join(root, "charts", "sluice"))
	rendered := helm(t, false, "template", "sluice", filepath.Join(root, "charts", "sluice"), "-n", "sluice-system")
	chartObjs, err := release.DecodeObjects([]byte(rendered))
	if err != nil {
		t.Fatal(err)
	}
	installObjs, err := release.Kustomize(filepath.Join(root, "config", "default"))
	if err != nil {
		t.Fatal(err)
	}
	key := func(o *unstructured.Unstructured) string {
		return o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
	}
	var chart, install []string
	for _, o := range chartObjs {
		chart = append(chart, key(o))
	}
	for _, o := range installObjs {
		if o.GetKind() != "Namespace" {
			install = append(install, key(o))
		}
	}
	slices.Sort(chart)
	slices.Sort(install)
	if !slices.Equal(chart, install) {
		t.Errorf("the chart renders\n%s\nthe kustomize install has\n%s", strings.Join(chart, "\n"), strings.Join(install, "\n"))
	}
	cm := configMap(t, chartObjs)
	file, err := configfile.Decode([]byte(cm.Data["controller_manager_config.yaml"]), "sluice-system")
	if err != nil {
		t.Fatalf("the chart's configuration: %v", err)
	}
	if *file.Config.Namespace != "sluice-system" || !*file.Config.InternalCertManagement.Enable {
		t.Errorf("the chart's configuration: namespace %s, internal certificates %v", *file.Config.Namespace, *file.Config.InternalCertManagement.Enable)
	}
}

// Values: the schema refuses what the manager or the chart could not use,
// naming the field; cert-manager, a ServiceMonitor, scheduling values and
// the configuration reach the objects.
func TestChartValues(t *testing.T) {
	chart := filepath.Join(repoRoot(t), "charts", "sluice")
	for _, tc := range []struct{ set, want string }{
		{"managerConfig.integrations.framworks[0]=pod", "framworks"},
		{"managerConfig.waitForPodsReady.timeout=5", "timeout"},
		{"replicas=0", "replicas"},
		{"image.digest=latest", "digest"},
		{"image.pullPolicy=Sometimes", "pullPolicy"},
		{"metric.service=true", "metric"},
	} {
		out := helm(t, true, "template", "sluice", chart, "--set", tc.set)
		if !strings.Contains(out, tc.want) || !strings.Contains(out, "schema") {
			t.Errorf("--set %s: the error does not name %s against the schema:\n%s", tc.set, tc.want, out)
		}
	}

	rendered := helm(t, false, "template", "sluice", chart, "-n", "queues",
		"--set", "certManager.enable=true", "--set", "metrics.serviceMonitor.enable=true",
		"--set", "priorityClassName=system-cluster-critical", "--set", "nodeSelector.pool=system",
		"--set", "managerConfig.integrations.frameworks={batch/job,pod}", "--set", "podDisruptionBudget.enable=false",
		"--set", "dashboard.enable=true")
	objs, err := release.DecodeObjects([]byte(rendered))
	if err != nil {
		t.Fatal(err)
	}
	has := func(kind, name string) *unstructured.Unstructured {
		i := slices.IndexFunc(objs, func(o *unstructured.Unstructured) bool { return o.GetKind() == kind && o.GetName() == name })
		if i < 0 {
			return nil
		}
		return objs[i]
	}
	if has("Certificate", "sluice-serving-cert") == nil || has("Issuer", "sluice-selfsigned-issuer") == nil || has("Secret", "sluice-webhook-server-cert") != nil {
		t.Error("cert-manager: want a Certificate and an Issuer instead of the rotator's Secret")
	}
	if has("ServiceMonitor", "sluice-controller-manager-metrics-monitor") == nil {
		t.Error("no ServiceMonitor")
	}
	if has("PodDisruptionBudget", "sluice-controller-manager") != nil {
		t.Error("a PodDisruptionBudget although disabled")
	}
	if has("Deployment", "sluice-dashboard") == nil || has("Service", "sluice-dashboard") == nil || has("ClusterRole", "sluice-dashboard") == nil {
		t.Error("dashboard.enable: want the dashboard's Deployment, Service and ClusterRole")
	}
	// The visibility API: both APIServices get their CA from cert-manager,
	// and the certificate names the visibility Service.
	for _, name := range []string{"v1beta1.visibility.kueue.x-k8s.io", "v1beta2.visibility.kueue.x-k8s.io"} {
		if o := has("APIService", name); o == nil || o.GetAnnotations()["cert-manager.io/inject-ca-from"] != "queues/sluice-serving-cert" {
			t.Errorf("APIService %s: missing or without cert-manager's CA", name)
		}
	}
	if cert := has("Certificate", "sluice-serving-cert"); cert != nil {
		dnsNames, _, _ := unstructured.NestedStringSlice(cert.Object, "spec", "dnsNames")
		if !slices.Contains(dnsNames, "sluice-visibility-server.queues.svc") {
			t.Errorf("the serving certificate does not name the visibility Service: %v", dnsNames)
		}
	}
	for _, name := range []string{"sluice-validating-webhook-configuration", "sluice-mutating-webhook-configuration"} {
		for _, kind := range []string{"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"} {
			if o := has(kind, name); o != nil && o.GetAnnotations()["cert-manager.io/inject-ca-from"] != "queues/sluice-serving-cert" {
				t.Errorf("%s: annotations %v", name, o.GetAnnotations())
			}
		}
	}
	// The release's namespace is kept out of the fail-closed webhooks, and
	// only the integrations the configuration enables have theirs.
	vwc := convert[admissionv1.ValidatingWebhookConfiguration](t, has("ValidatingWebhookConfiguration", "sluice-validating-webhook-configuration"))
	var names []string
	for _, w := range vwc.Webhooks {
		names = append(names, w.Name)
	}
	for _, name := range []string{"vjob.kueue.x-k8s.io", "vpod.kueue.x-k8s.io", "vworkload.kueue.x-k8s.io", "vclusterqueue.kueue.x-k8s.io"} {
		if !slices.Contains(names, name) {
			t.Errorf("no webhook %s in %v", name, names)
		}
	}
	for _, name := range []string{"vdeployment.kueue.x-k8s.io", "vstatefulset.kueue.x-k8s.io"} {
		if slices.Contains(names, name) {
			t.Errorf("webhook %s of an integration the configuration does not enable", name)
		}
	}
	for _, w := range vwc.Webhooks {
		if w.NamespaceSelector == nil || len(w.NamespaceSelector.MatchExpressions) == 0 {
			continue
		}
		if values := w.NamespaceSelector.MatchExpressions[0].Values; !slices.Equal(values, []string{"kube-system", "queues"}) {
			t.Errorf("webhook %s leaves out %v, want kube-system and queues", w.Name, values)
		}
	}
	if o := has("CustomResourceDefinition", "workloads.kueue.x-k8s.io"); o == nil || o.GetAnnotations()["cert-manager.io/inject-ca-from"] != "queues/sluice-serving-cert" {
		t.Error("the Workload CRD's conversion webhook gets no CA from cert-manager")
	}
	file, err := configfile.Decode([]byte(configMap(t, objs).Data["controller_manager_config.yaml"]), "queues")
	if err != nil {
		t.Fatal(err)
	}
	cfg := file.Config
	if *cfg.Namespace != "queues" || *cfg.InternalCertManagement.Enable || !slices.Equal(cfg.Integrations.Frameworks, []string{"batch/job", "pod"}) {
		t.Errorf("configuration: namespace %s, internal certificates %v, frameworks %v", *cfg.Namespace, *cfg.InternalCertManagement.Enable, cfg.Integrations.Frameworks)
	}
	d := convert[appsv1.Deployment](t, has("Deployment", "sluice-controller-manager"))
	spec := d.Spec.Template.Spec
	if spec.PriorityClassName != "system-cluster-critical" || spec.NodeSelector["pool"] != "system" || len(spec.TopologySpreadConstraints) != 2 {
		t.Errorf("pod spec: priority %q, nodes %v, spread %v", spec.PriorityClassName, spec.NodeSelector, spec.TopologySpreadConstraints)
	}
}

func configMap(t *testing.T, objs []*unstructured.Unstructured) *corev1.ConfigMap {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == "ConfigMap" && o.GetName() == "sluice-manager-config" {
			return convert[corev1.ConfigMap](t, o)
		}
	}
	t.Fatal("no sluice-manager-config ConfigMap")
	return nil
}
