// Package install installs sluice as a user would, on a real API server
// without sluice in it: the release manifest with kubectl's server-side
// apply, and the Helm chart with helm install, upgrade and uninstall (Helm
// built from its Go module: bin/helm, `make helm`). The API server runs no
// containers, so these tests check the objects, not the manager's process.
package install

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluicehq/sluice/internal/release"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// A digest for the tests' pinned images (no image is pulled).
var testDigest = "sha256:" + strings.Repeat("5e", 32)

type env struct {
	t          *testing.T
	cluster    *framework.Cluster
	kubeconfig string
	root       string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	cluster, err := framework.StartEmptyCluster()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cluster.WriteAdminKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	return &env{t: t, cluster: cluster, kubeconfig: kubeconfig, root: repoRoot(t)}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// helm runs bin/helm with args and returns what it printed; a failure
// fails the test unless wantErr.
func helm(t *testing.T, wantErr bool, args ...string) string {
	t.Helper()
	bin := filepath.Join(repoRoot(t), "bin", "helm")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%v (run `make helm`)", err)
	}
	out, err := exec.Command(bin, args...).CombinedOutput()
	if (err != nil) != wantErr {
		t.Fatalf("helm %s: err %v, want error %v\n%s", strings.Join(args, " "), err, wantErr, out)
	}
	return string(out)
}

func (e *env) helm(args ...string) string {
	e.t.Helper()
	return helm(e.t, false, append(args, "--kubeconfig", e.kubeconfig)...)
}

// kubectl runs bin/k8s/kubectl against the cluster.
func (e *env) kubectl(args ...string) string {
	e.t.Helper()
	assets, err := framework.AssetsDir()
	if err != nil {
		e.t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(assets, "kubectl"), append(args, "--kubeconfig", e.kubeconfig)...).CombinedOutput()
	if err != nil {
		e.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// stampedChart is the chart as `make release` packages it, at version.
func stampedChart(t *testing.T, version string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "sluice")
	if err := release.CopyDir(filepath.Join(repoRoot(t), "charts", "sluice"), dir); err != nil {
		t.Fatal(err)
	}
	if err := release.StampChart(dir, version, testDigest); err != nil {
		t.Fatal(err)
	}
	return dir
}

// allExist checks that every object of the rendered manifest is on the API
// server, and returns them.
func (e *env) allExist(manifest string) []*unstructured.Unstructured {
	e.t.Helper()
	objs, err := release.DecodeObjects([]byte(manifest))
	if err != nil {
		e.t.Fatal(err)
	}
	if len(objs) == 0 {
		e.t.Fatal("an empty manifest")
	}
	for _, obj := range objs {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(obj.GroupVersionKind())
		if err := e.cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), live); err != nil {
			e.t.Errorf("%s %s/%s is not on the API server: %v", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
		}
	}
	return objs
}

// podTemplateIsValid creates (dry run) a Pod from the manager
// Deployment's template: the API server validates it as it would the
// ReplicaSet's pods.
func (e *env) podTemplateIsValid(namespace string) *appsv1.Deployment {
	e.t.Helper()
	ctx := context.Background()
	d := &appsv1.Deployment{}
	if err := e.cluster.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "sluice-controller-manager"}, d); err != nil {
		e.t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, GenerateName: "sluice-template-", Labels: d.Spec.Template.Labels},
		Spec: d.Spec.Template.Spec}
	if err := e.cluster.Client.Create(ctx, pod, client.DryRunAll); err != nil {
		e.t.Errorf("the manager's pod template is refused: %v", err)
	}
	return d
}

func convert[T any](t *testing.T, obj *unstructured.Unstructured) *T {
	t.Helper()
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, out); err != nil {
		t.Fatal(err)
	}
	return out
}
