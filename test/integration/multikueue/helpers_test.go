package multikueue

import (
	"context"
	"fmt"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// setup is one test's queues: a namespace (of the same name in every
// cluster) whose LocalQueue "lq" leads, in the manager, to a ClusterQueue
// of managerCPU with a MultiKueue check dispatching to the workers, and
// in each worker to a ClusterQueue of workerCPU.
type setup struct {
	ns, check string
	cq        *kueue.ClusterQueue
}

func newSetup(t *testing.T, managerCPU, workerCPU string, clusters ...string) setup {
	t.Helper()
	ns := cluster.Namespace(t, nil)
	for _, name := range clusters {
		w := workers[name]
		f := framework.Flavor(w.Unique("flavor"), nil)
		cq := framework.ClusterQueue(w.Unique("cq"), "", framework.CPUQuota{Flavor: f.Name, Nominal: workerCPU})
		w.MustCreate(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, f, cq, framework.LocalQueue(ns, "lq", cq.Name))
		w.WaitActive(t, cq)
		ensureWorker(t, name)
	}
	cfg := &kueue.MultiKueueConfig{ObjectMeta: metav1.ObjectMeta{Name: cluster.Unique("mkconfig")}, Spec: kueue.MultiKueueConfigSpec{Clusters: clusters}}
	ac := &kueue.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: cluster.Unique("dispatch")}, Spec: kueue.AdmissionCheckSpec{
		ControllerName: kueue.MultiKueueControllerName,
		Parameters:     &kueue.AdmissionCheckParametersReference{APIGroup: kueue.GroupVersion.Group, Kind: "MultiKueueConfig", Name: cfg.Name}}}
	f := framework.Flavor(cluster.Unique("flavor"), nil)
	cq := framework.ClusterQueue(cluster.Unique("cq"), "", framework.CPUQuota{Flavor: f.Name, Nominal: managerCPU})
	cq.Spec.AdmissionChecksStrategy = &kueue.AdmissionChecksStrategy{AdmissionChecks: []kueue.AdmissionCheckStrategyRule{{Name: ac.Name}}}
	cluster.MustCreate(t, cfg, ac, f, cq, framework.LocalQueue(ns, "lq", cq.Name))
	cluster.WaitActive(t, cq)
	return setup{ns: ns, check: ac.Name, cq: cq}
}

// ensureWorker creates the MultiKueueCluster of a worker once; its
// kubeconfig is in the Secret of its name.
func ensureWorker(t *testing.T, name string) {
	t.Helper()
	mkc := &kueue.MultiKueueCluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kueue.MultiKueueClusterSpec{
		ClusterSource: kueue.ClusterSource{KubeConfig: &kueue.KubeConfig{Location: name, LocationType: kueue.SecretLocationType}}}}
	if err := cluster.Client.Create(context.Background(), mkc); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	waitClusterActive(t, name, metav1.ConditionTrue, "Active")
}

func waitClusterActive(t *testing.T, name string, status metav1.ConditionStatus, reason string) *metav1.Condition {
	t.Helper()
	var got *metav1.Condition
	framework.Eventually(t, fmt.Sprintf("MultiKueueCluster %s to be Active=%s/%s", name, status, reason), func(ctx context.Context) (bool, error) {
		mkc := &kueue.MultiKueueCluster{}
		if err := cluster.Client.Get(ctx, client.ObjectKey{Name: name}, mkc); err != nil {
			return false, err
		}
		got = meta.FindStatusCondition(mkc.Status.Conditions, kueue.MultiKueueClusterActive)
		if got == nil || got.Status != status || got.Reason != reason {
			return false, fmt.Errorf("Active: %+v", got)
		}
		return true, nil
	})
	return got
}

// dispatchedTo waits until the Workload's check is Ready with a worker
// named in clusterName, and returns that worker.
func dispatchedTo(t *testing.T, wl *kueue.Workload, check string) string {
	t.Helper()
	got := cluster.WaitWorkload(t, wl, "dispatched", func(wl *kueue.Workload) error {
		if s := framework.CheckStates(wl)[check]; s != kueue.CheckStateReady || wl.Status.ClusterName == nil || !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted) {
			return fmt.Errorf("check %s, clusterName %v, conditions %v", s, wl.Status.ClusterName, wl.Status.Conditions)
		}
		return nil
	})
	return *got.Status.ClusterName
}

// remoteJob waits for the Job to exist in the worker.
func remoteJob(t *testing.T, worker string, j *batchv1.Job) *batchv1.Job {
	t.Helper()
	got := &batchv1.Job{}
	framework.Eventually(t, fmt.Sprintf("Job %s in %s", j.Name, worker), func(ctx context.Context) (bool, error) {
		return true, workers[worker].Client.Get(ctx, client.ObjectKeyFromObject(j), got)
	})
	return got
}

// goneFrom waits until obj doesn't exist in the worker.
func goneFrom(t *testing.T, worker string, obj client.Object) {
	t.Helper()
	framework.Eventually(t, fmt.Sprintf("%T %s gone from %s", obj, obj.GetName(), worker), func(ctx context.Context) (bool, error) {
		err := workers[worker].Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err == nil {
			return false, fmt.Errorf("still there")
		}
		return false, err
	})
}

func getJob(t *testing.T, c client.Client, j *batchv1.Job) *batchv1.Job {
	t.Helper()
	got := &batchv1.Job{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(j), got); err != nil {
		t.Fatal(err)
	}
	return got
}

// runPods plays the worker's Job controller: n pods run and are ready.
func runPods(t *testing.T, worker string, j *batchv1.Job, n int32) {
	t.Helper()
	workers[worker].SetJobStatus(t, j, func(current *batchv1.Job) {
		now := metav1.Now()
		current.Status.StartTime = &now
		current.Status.Active, current.Status.Ready = n, ptr.To(n)
	})
}

// complete plays the worker's Job controller finishing the Job.
func complete(t *testing.T, worker string, j *batchv1.Job) {
	t.Helper()
	workers[worker].SetJobStatus(t, j, func(current *batchv1.Job) {
		now := metav1.Now()
		if current.Status.StartTime == nil {
			current.Status.StartTime = &now
		}
		current.Status.Active, current.Status.Ready = 0, ptr.To(int32(0))
		current.Status.Succeeded = ptr.Deref(current.Spec.Completions, 1)
		current.Status.CompletionTime = &now
		current.Status.Conditions = append(current.Status.Conditions,
			batchv1.JobCondition{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: now},
			batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: now})
	})
}

func other(worker string) string {
	if worker == workerNames[0] {
		return workerNames[1]
	}
	return workerNames[0]
}
