package manager

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	configfile "github.com/sluicehq/sluice/apis/config"
	"github.com/sluicehq/sluice/internal/manager"
	"github.com/sluicehq/sluice/internal/release"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// Both installs, sluice's own names (config/default) and Kueue's
// (config/kueue-names), render into manifests that agree with the
// configuration they carry: the Deployment, its ServiceAccount, Secret and
// ConfigMap, the webhook Service, and the webhook configurations the
// manager keeps, all under the install's names and namespace.
func TestInstallsAgreeWithTheirConfiguration(t *testing.T) {
	for _, tc := range []struct{ overlay, namespace, prefix string }{
		{"default", "sluice-system", "sluice-"},
		{"kueue-names", "kueue-system", "kueue-"},
	} {
		t.Run(tc.overlay, func(t *testing.T) {
			objs := render(t, tc.overlay)
			deployment := &appsv1.Deployment{}
			get(t, objs, "Deployment", tc.prefix+"controller-manager", deployment)
			if deployment.Namespace != tc.namespace || deployment.Spec.Template.Spec.ServiceAccountName != tc.prefix+"controller-manager" {
				t.Errorf("deployment %s/%s runs as %s", deployment.Namespace, deployment.Name, deployment.Spec.Template.Spec.ServiceAccountName)
			}
			var secretName, configMapName string
			for _, v := range deployment.Spec.Template.Spec.Volumes {
				switch {
				case v.Secret != nil:
					secretName = v.Secret.SecretName
				case v.ConfigMap != nil:
					configMapName = v.ConfigMap.Name
				}
			}
			cm := &corev1.ConfigMap{}
			get(t, objs, "ConfigMap", configMapName, cm)
			file, err := configfile.Decode([]byte(cm.Data["controller_manager_config.yaml"]), deployment.Namespace)
			if err != nil {
				t.Fatalf("the installed configuration: %v", err)
			}
			cfg := file.Config
			icm := cfg.InternalCertManagement
			if *cfg.Namespace != tc.namespace || *icm.WebhookSecretName != secretName {
				t.Errorf("configuration namespace %s, secret %s; the Deployment mounts %s", *cfg.Namespace, *icm.WebhookSecretName, secretName)
			}
			get(t, objs, "Secret", secretName, &corev1.Secret{})
			get(t, objs, "ServiceAccount", tc.prefix+"controller-manager", &corev1.ServiceAccount{})
			svc := &corev1.Service{}
			get(t, objs, "Service", *icm.WebhookServiceName, svc)
			validatingName, mutatingName := manager.WebhookConfigurationNames(cfg)
			validating, mutating := &admissionv1.ValidatingWebhookConfiguration{}, &admissionv1.MutatingWebhookConfiguration{}
			get(t, objs, "ValidatingWebhookConfiguration", validatingName, validating)
			get(t, objs, "MutatingWebhookConfiguration", mutatingName, mutating)
			if !strings.HasPrefix(validatingName, tc.prefix) {
				t.Errorf("webhook configuration %s outside the install's names", validatingName)
			}
			var clients []admissionv1.WebhookClientConfig
			for _, w := range validating.Webhooks {
				clients = append(clients, w.ClientConfig)
				checkExcludes(t, w.Name, w.NamespaceSelector, tc.namespace)
			}
			for _, w := range mutating.Webhooks {
				clients = append(clients, w.ClientConfig)
				checkExcludes(t, w.Name, w.NamespaceSelector, tc.namespace)
			}
			for _, c := range clients {
				if c.Service == nil || c.Service.Name != svc.Name || c.Service.Namespace != tc.namespace {
					t.Errorf("a webhook calls %+v, not the Service %s/%s", c.Service, tc.namespace, svc.Name)
				}
			}
			binding := &rbacv1.ClusterRoleBinding{}
			get(t, objs, "ClusterRoleBinding", tc.prefix+"manager-rolebinding", binding)
			if s := binding.Subjects[0]; s.Name != deployment.Spec.Template.Spec.ServiceAccountName || s.Namespace != tc.namespace {
				t.Errorf("the manager's role is bound to %s/%s", s.Namespace, s.Name)
			}
			get(t, objs, "ClusterRole", tc.prefix+"batch-user-role", &rbacv1.ClusterRole{})

			// The visibility API: both APIServices call the install's
			// visibility Service, which selects the leading manager; the
			// manager may read kube-system's authentication ConfigMap; the
			// flow-control objects are cluster-scoped.
			visibility := &corev1.Service{}
			get(t, objs, "Service", tc.prefix+"visibility-server", visibility)
			if visibility.Namespace != tc.namespace || visibility.Spec.Selector[manager.LeaderLabel] != "true" {
				t.Errorf("visibility Service %s/%s selects %v", visibility.Namespace, visibility.Name, visibility.Spec.Selector)
			}
			for _, version := range []string{"v1beta1", "v1beta2"} {
				apiService := objectNamed(objs, "APIService", version+".visibility.kueue.x-k8s.io")
				if apiService == nil {
					t.Fatalf("no APIService %s.visibility.kueue.x-k8s.io", version)
				}
				name, _, _ := unstructured.NestedString(apiService.Object, "spec", "service", "name")
				namespace, _, _ := unstructured.NestedString(apiService.Object, "spec", "service", "namespace")
				if name != visibility.Name || namespace != tc.namespace {
					t.Errorf("APIService %s calls %s/%s", apiService.GetName(), namespace, name)
				}
			}
			reader := objectNamed(objs, "RoleBinding", tc.prefix+"visibility-server-auth-reader")
			if reader == nil || reader.GetNamespace() != "kube-system" {
				t.Fatalf("the visibility reader binding: %v", reader)
			}
			subjects, _, _ := unstructured.NestedSlice(reader.Object, "subjects")
			if len(subjects) != 1 || subjects[0].(map[string]any)["name"] != deployment.Spec.Template.Spec.ServiceAccountName || subjects[0].(map[string]any)["namespace"] != tc.namespace {
				t.Errorf("the visibility reader binding binds %v", subjects)
			}
			for _, kind := range []string{"FlowSchema", "PriorityLevelConfiguration"} {
				if o := objectNamed(objs, kind, tc.prefix+"visibility"); o == nil || o.GetNamespace() != "" {
					t.Errorf("%s %svisibility: %v", kind, tc.prefix, o)
				}
			}
			if fs := objectNamed(objs, "FlowSchema", tc.prefix+"visibility"); fs != nil {
				if level, _, _ := unstructured.NestedString(fs.Object, "spec", "priorityLevelConfiguration", "name"); level != tc.prefix+"visibility" {
					t.Errorf("the FlowSchema's priority level is %q", level)
				}
			}
		})
	}
}

// checkExcludes: a webhook with a namespace selector (those of the job
// kinds) keeps the manager's own namespace out.
func checkExcludes(t *testing.T, name string, sel *metav1.LabelSelector, namespace string) {
	t.Helper()
	if sel == nil || len(sel.MatchExpressions) == 0 {
		return
	}
	if !slices.ContainsFunc(sel.MatchExpressions, func(r metav1.LabelSelectorRequirement) bool {
		return r.Operator == metav1.LabelSelectorOpNotIn && slices.Contains(r.Values, namespace)
	}) {
		t.Errorf("webhook %s does not keep %s out: %v", name, namespace, sel.MatchExpressions)
	}
}

// objectNamed is the object of kind and name in objs, or nil.
func objectNamed(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// render is config/<overlay> through kustomize, as make release renders it.
func render(t *testing.T, overlay string) []*unstructured.Unstructured {
	t.Helper()
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	objs, err := release.Kustomize(filepath.Join(root, "config", overlay))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// get finds the object of a kind and name and converts it into typed.
func get(t *testing.T, objs []*unstructured.Unstructured, kind, name string, typed any) {
	t.Helper()
	o := objectNamed(objs, kind, name)
	if o == nil {
		t.Fatalf("no %s %s in the install", kind, name)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, typed); err != nil {
		t.Fatal(err)
	}
}
