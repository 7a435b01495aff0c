package manager

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	configfile "github.com/sluicehq/sluice/apis/config"
	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration/kinds"
	"github.com/sluicehq/sluice/internal/manager"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// A framework sluice does not implement may be named (Kueue's default
// configuration names several) only while the cluster does not serve its
// kind: once its CustomResourceDefinition appears, the running manager
// stops with an error naming the field, and a new one refuses to start.
func TestUnimplementedFrameworksAreRefusedOnceServed(t *testing.T) {
	cluster, err := framework.StartClusterWithoutWebhooks()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	cfg := cluster.ManagerConfig()
	cfg.Integrations.Frameworks = []string{configapi.FrameworkBatchJob, "kubeflow.org/pytorchjob"}

	ctx := t.Context()
	mgr, err := manager.New(ctx, cluster.RestConfig, cfg, manager.Options{SeveralPerProcess: true})
	if err != nil {
		t.Fatalf("the manager must start while the cluster serves no PyTorchJob: %v", err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- mgr.Start(ctx) }()
	// Started: it admits (the framework guard runs with everything else).
	framework.Eventually(t, "the manager to be elected and caches synced", func(ctx context.Context) (bool, error) {
		return mgr.GetCache().WaitForCacheSync(ctx), nil
	})

	crds, err := client.New(cluster.RestConfig, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(crds.Scheme()); err != nil {
		t.Fatal(err)
	}
	if err := crds.Create(ctx, pyTorchJobCRD()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-stopped:
		if err == nil || !strings.Contains(err.Error(), "integrations.frameworks[1] (kubeflow.org/pytorchjob)") || !strings.Contains(err.Error(), "pytorchjobs.kubeflow.org") {
			t.Fatalf("the manager stopped with %v, want an error naming integrations.frameworks[1] and pytorchjobs.kubeflow.org", err)
		}
	case <-time.After(framework.Timeout):
		t.Fatal("the manager kept running after a PyTorchJob CustomResourceDefinition appeared")
	}

	framework.Eventually(t, "a new manager to refuse to start", func(ctx context.Context) (bool, error) {
		_, err := manager.New(ctx, cluster.RestConfig, cfg, manager.Options{SeveralPerProcess: true})
		if err == nil {
			return false, fmt.Errorf("started although the cluster serves PyTorchJobs")
		}
		if !strings.Contains(err.Error(), "integrations.frameworks[1] (kubeflow.org/pytorchjob)") {
			return false, err
		}
		return true, nil
	})
}

// A kind queued through another, enabled without it, is refused at
// startup, naming the field: a RayService's RayClusters would run unqueued.
func TestAKindWithoutTheKindItIsQueuedThroughIsRefused(t *testing.T) {
	cfg := &configapi.Configuration{Integrations: &configapi.Integrations{
		Frameworks: []string{configapi.FrameworkBatchJob, configapi.FrameworkRayService}}}
	configapi.SetDefaults(cfg)
	_, err := manager.New(t.Context(), &rest.Config{Host: "https://127.0.0.1:1"}, cfg, manager.Options{SeveralPerProcess: true})
	if err == nil || !strings.Contains(err.Error(), "integrations.frameworks") || !strings.Contains(err.Error(), "ray.io/rayservice needs ray.io/raycluster") {
		t.Fatalf("the manager started with %v, want it refused naming integrations.frameworks and ray.io/raycluster", err)
	}
}

// An implemented kind enabled before the cluster serves it (JobSet
// installed after sluice): the manager starts, stops once its
// CustomResourceDefinition appears, and the next one queues its jobs.
func TestJobSetInstalledLaterIsSetUpOnRestart(t *testing.T) {
	cluster, err := framework.StartClusterWithoutWebhooks()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	cfg := cluster.ManagerConfig()
	cfg.Integrations.Frameworks = []string{configapi.FrameworkBatchJob, configapi.FrameworkJobSet}

	ctx := t.Context()
	mgr, err := manager.New(ctx, cluster.RestConfig, cfg, manager.Options{SeveralPerProcess: true})
	if err != nil {
		t.Fatalf("the manager must start while the cluster serves no JobSet: %v", err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- mgr.Start(ctx) }()
	framework.Eventually(t, "the manager's caches to sync", func(ctx context.Context) (bool, error) {
		return mgr.GetCache().WaitForCacheSync(ctx), nil
	})
	if err := cluster.InstallJobSetCRD(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-stopped:
		if err == nil || !strings.Contains(err.Error(), "restarting to queue the jobs of integration jobset.x-k8s.io/jobset") {
			t.Fatalf("the manager stopped with %v, want the restart naming the JobSet integration", err)
		}
	case <-time.After(framework.Timeout):
		t.Fatal("the manager kept running without a JobSet controller after JobSets became served")
	}

	stop, err := cluster.StartManager(cfg, manager.Options{SeveralPerProcess: true})
	if err != nil {
		t.Fatalf("the restarted manager: %v", err)
	}
	t.Cleanup(func() { _ = stop() })
	ns := cluster.Unique("later")
	js := &jobsetapi.JobSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "js", Labels: map[string]string{kueue.QueueNameLabel: "lq"}},
		Spec: jobsetapi.JobSetSpec{Suspend: ptr.To(true), ReplicatedJobs: []jobsetapi.ReplicatedJob{{Name: "workers", Replicas: 2,
			Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: "busybox"}}}}}}}}}}
	cluster.MustCreate(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, js)
	framework.Eventually(t, "the restarted manager to create the JobSet's Workload", func(ctx context.Context) (bool, error) {
		list := &kueue.WorkloadList{}
		if err := cluster.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		for _, wl := range list.Items {
			if owner := metav1.GetControllerOf(&wl); owner != nil && owner.UID == js.UID && len(wl.Spec.PodSets) == 1 && wl.Spec.PodSets[0].Count == 2 {
				return true, nil
			}
		}
		return false, fmt.Errorf("%d Workloads, none the JobSet's", len(list.Items))
	})
}

func pyTorchJobCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "pytorchjobs.kubeflow.org"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "kubeflow.org", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "pytorchjobs", Singular: "pytorchjob", Kind: "PyTorchJob", ListKind: "PyTorchJobList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
		},
	}
}

// pprofBindAddress serves Go's profiles.
func TestPprofBindAddressServesProfiles(t *testing.T) {
	cluster, err := framework.StartClusterWithoutWebhooks()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	cfg := cluster.ManagerConfig()
	cfg.PprofBindAddress = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	stop, err := cluster.StartManager(cfg, manager.Options{SeveralPerProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stop() })
	framework.Eventually(t, "the profiles to be served on "+cfg.PprofBindAddress, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+cfg.PprofBindAddress+"/debug/pprof/", nil)
		if err != nil {
			return false, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false, fmt.Errorf("status %s", resp.Status)
		}
		return true, nil
	})
}

// Kueue's own default configuration file starts sluice and queues a Job
// (sluice implements every framework it enables; their kinds are not
// served here), with only the addresses changed to this test's.
func TestKueueDefaultConfigurationRunsAManager(t *testing.T) {
	cluster, err := framework.StartCluster()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "apis", "config", "testdata", "kueue-v0.19.2", "controller_manager_config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	file, err := configfile.Decode(data, "kueue-system")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range file.NotActedOn(kinds.Frameworks()) {
		if strings.Contains(line, "not implemented") {
			t.Errorf("Kueue's default file enables only frameworks sluice implements, but %q", line)
		}
	}
	cfg := file.Config
	test := cluster.ManagerConfig()
	cfg.Webhook, cfg.Metrics.BindAddress, cfg.Health.HealthProbeBindAddress = test.Webhook, "0", "0"
	cfg.LeaderElection.LeaderElect, cfg.InternalCertManagement.Enable = ptr.To(false), ptr.To(false)
	stop, err := cluster.StartManager(cfg, manager.Options{EnableWebhooks: true, SeveralPerProcess: true})
	if err != nil {
		t.Fatalf("Kueue's default configuration: %v", err)
	}
	t.Cleanup(func() { _ = stop() })

	ns := cluster.Namespace(t, nil)
	cq := framework.ClusterQueue(cluster.Unique("cq"), "", framework.CPUQuota{Flavor: "default-flavor", Nominal: "2"})
	cluster.MustCreate(t, framework.Flavor("default-flavor", nil), cq, framework.LocalQueue(ns, "lq", cq.Name))
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "job", Labels: map[string]string{kueue.QueueNameLabel: "lq"}},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}}}
	cluster.MustCreate(t, j)
	framework.Eventually(t, "the Job to be started by its admission", func(ctx context.Context) (bool, error) {
		current := &batchv1.Job{}
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(j), current); err != nil {
			return false, err
		}
		if ptr.Deref(current.Spec.Suspend, true) {
			return false, fmt.Errorf("still suspended")
		}
		return true, nil
	})
	// It ran because it was admitted: its Workload holds the quota.
	wls := &kueue.WorkloadList{}
	if err := cluster.Client.List(context.Background(), wls, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(wls.Items) != 1 || !framework.Reserved(&wls.Items[0]) {
		t.Fatalf("the Job ran without an admitted Workload: %+v", wls.Items)
	}
}
