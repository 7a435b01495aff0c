// Package unlabelled tests manageJobsWithoutQueueName on a real API server:
// Jobs without a queue-name label are queued in the selected namespaces
// (and wait until they get a queue), never in kube-system.
package unlabelled

import (
	"context"
	"fmt"
	"os"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
	"github.com/sluicehq/sluice/internal/integration/job"
	"github.com/sluicehq/sluice/internal/manager"
	"github.com/sluicehq/sluice/test/integration/framework"
)

var cluster *framework.Cluster

func TestMain(m *testing.M) {
	os.Exit(framework.RunSuiteWith(m, &cluster, manager.Options{EnableWebhooks: true}, func(cfg *configapi.Configuration) {
		cfg.ManageJobsWithoutQueueName = true
	}))
}

func unlabelledJob(ns string) *batchv1.Job {
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster.Unique("job")}, Spec: batchv1.JobSpec{
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "main", Image: "busybox",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}},
		}},
	}}
}

func TestUnlabelledJobWaitsForAQueue(t *testing.T) {
	ns := cluster.Unique("team")
	flavor := &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: cluster.Unique("flavor")}}
	cq := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: cluster.Unique("cq")}, Spec: kueue.ClusterQueueSpec{
		NamespaceSelector: &metav1.LabelSelector{},
		ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
			Flavors: []kueue.FlavorQuotas{{Name: kueue.ResourceFlavorReference(flavor.Name),
				Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse("2")}}}}}},
	}}
	cluster.MustCreate(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, flavor, cq,
		&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lq"}, Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(cq.Name)}})

	j := unlabelledJob(ns)
	cluster.MustCreate(t, j)
	if !ptr.Deref(j.Spec.Suspend, false) {
		t.Fatal("an unlabelled Job in a selected namespace was not created suspended")
	}
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: integration.WorkloadName(job.Kind.GVK, j.Name, j.UID)}}
	framework.Eventually(t, "the Workload to wait for a LocalQueue", func(ctx context.Context) (bool, error) {
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(wl), wl); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
		if wl.Spec.QueueName != "" || c == nil || c.Status != metav1.ConditionFalse {
			return false, fmt.Errorf("queueName %q, QuotaReserved %+v", wl.Spec.QueueName, c)
		}
		return true, nil
	})

	// Given a queue while suspended, it runs.
	framework.Update(t, cluster.Client, j, func() { j.Labels = map[string]string{kueue.QueueNameLabel: "lq"} })
	framework.Eventually(t, "the Job to run once it names a queue", func(ctx context.Context) (bool, error) {
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(j), j); err != nil {
			return false, err
		}
		return !ptr.Deref(j.Spec.Suspend, true), nil
	})
}

func TestKubeSystemIsNeverManaged(t *testing.T) {
	j := unlabelledJob("kube-system")
	cluster.MustCreate(t, j)
	if ptr.Deref(j.Spec.Suspend, false) {
		t.Fatal("a Job in kube-system was suspended")
	}
	// A Job created after it in a managed namespace gets its Workload: by
	// then the kube-system one has been seen, and it has none.
	marker := unlabelledJob("default")
	cluster.MustCreate(t, marker)
	framework.Eventually(t, "the marker Job's Workload", func(ctx context.Context) (bool, error) {
		err := cluster.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: integration.WorkloadName(job.Kind.GVK, marker.Name, marker.UID)}, &kueue.Workload{})
		return err == nil, err
	})
	err := cluster.Client.Get(context.Background(), client.ObjectKey{Namespace: "kube-system", Name: integration.WorkloadName(job.Kind.GVK, j.Name, j.UID)}, &kueue.Workload{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("a Workload exists for a kube-system Job (err %v)", err)
	}
}
