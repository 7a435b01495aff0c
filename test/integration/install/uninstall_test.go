package install

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/config"
	"github.com/sluicehq/sluice/internal/manager"
	"github.com/sluicehq/sluice/internal/uninstall"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// After sluice is removed, what it managed and is then deleted hangs in
// Terminating on sluice's finalizers, and its webhooks refuse Jobs and
// Pods. `sluice uninstall --cleanup` (uninstall.Cleanup) removes both: the
// deleted Workload, Pod and ResourceFlavor go away, the Job nobody deleted
// stays. While a manager holds its Lease, it refuses.
func TestUninstallCleanupLeavesNothingStuck(t *testing.T) {
	cluster, err := framework.StartCluster()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	c := cluster.Client
	ctx := context.Background()
	stop, err := cluster.StartManager(cluster.ManagerConfig(), manager.Options{EnableWebhooks: true, SeveralPerProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = stop()
		}
	})

	ns := cluster.Namespace(t, nil)
	flavor := framework.Flavor("default", nil)
	cluster.MustCreate(t, flavor, framework.ClusterQueue("cq", "", framework.CPUQuota{Flavor: "default", Nominal: "10"}), framework.LocalQueue(ns, "lq", "cq"))
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "job", Labels: map[string]string{kueue.QueueNameLabel: "lq"}},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pod", Labels: map[string]string{kueue.QueueNameLabel: "lq"}},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}
	cluster.MustCreate(t, job, pod)

	// sluice's finalizers on the Job's Workload, the Pod and the flavor.
	var wl *kueue.Workload
	framework.Eventually(t, "sluice's finalizers on the workload, the pod and the flavor", func(ctx context.Context) (bool, error) {
		wls := &kueue.WorkloadList{}
		if err := c.List(ctx, wls, client.InNamespace(ns)); err != nil {
			return false, err
		}
		var all []client.Object
		for i := range wls.Items {
			all = append(all, &wls.Items[i])
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return false, err
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(flavor), flavor); err != nil {
			return false, err
		}
		all = append(all, pod, flavor)
		if len(wls.Items) < 2 {
			return false, nil
		}
		for _, obj := range all {
			if !slices.ContainsFunc(obj.GetFinalizers(), func(f string) bool { return strings.HasPrefix(f, uninstall.FinalizerPrefix) }) {
				return false, nil
			}
		}
		for i := range wls.Items {
			if owners := wls.Items[i].OwnerReferences; len(owners) > 0 && owners[0].Kind == "Job" {
				wl = &wls.Items[i]
			}
		}
		return wl != nil, nil
	})

	// sluice removed (its manager stopped), then the user deletes things.
	stopped = true
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	stuck := []client.Object{wl, pod, flavor}
	for _, obj := range stuck {
		if err := c.Delete(ctx, obj); err != nil {
			t.Fatal(err)
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil || obj.GetDeletionTimestamp() == nil {
			t.Fatalf("%T %s is not stuck terminating: %v", obj, obj.GetName(), err)
		}
	}

	disc := discovery.NewDiscoveryClientForConfigOrDie(cluster.RestConfig)
	now := time.Now()
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sluice-leader"}, Spec: coordinationv1.LeaseSpec{
		HolderIdentity: ptr.To("manager-1"), LeaseDurationSeconds: ptr.To[int32](15), RenewTime: &metav1.MicroTime{Time: now}}}
	cluster.MustCreate(t, lease)
	opts := uninstall.Options{NamePrefix: "sluice-", LeaseNamespace: ns, LeaseName: lease.Name, Now: now.Add(5 * time.Second)}
	if _, err := uninstall.Cleanup(ctx, c, disc, opts); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("cleanup while the Lease is held: %v, want a refusal that mentions --force", err)
	}
	for _, obj := range stuck {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Fatalf("the refused cleanup changed %s: %v", obj.GetName(), err)
		}
	}

	opts.Now = now.Add(time.Minute) // the Lease has expired: no manager
	report, err := uninstall.Cleanup(ctx, c, disc, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(report.WebhookConfigurations, []string{config.ValidatingWebhookConfigurationName, config.MutatingWebhookConfigurationName}) {
		t.Errorf("deleted webhook configurations %v", report.WebhookConfigurations)
	}
	if report.Finalizers["pods"] != 1 || report.Finalizers["workloads.kueue.x-k8s.io"] < 2 || report.Finalizers["resourceflavors.kueue.x-k8s.io"] != 1 {
		t.Errorf("finalizers removed: %v", report.Finalizers)
	}
	framework.Eventually(t, "the deleted objects to be gone", func(ctx context.Context) (bool, error) {
		for _, obj := range stuck {
			if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); !apierrors.IsNotFound(err) {
				return false, fmt.Errorf("%T %s: %v (finalizers %v)", obj, obj.GetName(), err, obj.GetFinalizers())
			}
		}
		return true, nil
	})
	if err := c.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil || job.DeletionTimestamp != nil {
		t.Errorf("the Job nobody deleted: %v, deleting %v", err, job.DeletionTimestamp)
	}
	vwc := &admissionv1.ValidatingWebhookConfiguration{}
	if err := c.Get(ctx, client.ObjectKey{Name: config.ValidatingWebhookConfigurationName}, vwc); !apierrors.IsNotFound(err) {
		t.Errorf("the validating webhook configuration after cleanup: %v", err)
	}
	// With the webhooks gone, a Job can be created while sluice is away.
	cluster.MustCreate(t, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "after"}, Spec: batchv1.JobSpec{
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}})

	// Running it again is safe and finds nothing.
	again, err := uninstall.Cleanup(ctx, c, disc, opts)
	if err != nil || len(again.WebhookConfigurations) != 0 {
		t.Errorf("a second cleanup: %+v, %v", again, err)
	}
}
