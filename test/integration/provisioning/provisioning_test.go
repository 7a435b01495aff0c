package provisioning

import (
	"context"
	"fmt"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	autoscaling "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/workload"
	"github.com/sluicehq/sluice/test/integration/framework"
)

const class = "queued-provisioning.gke.io"

// provisionedQueue makes a namespace whose LocalQueue "lq" leads to a
// ClusterQueue of cpu quota with a ProvisioningRequest check configured
// by spec; it returns the namespace and the check's name.
func provisionedQueue(t *testing.T, cpu string, spec kueue.ProvisioningRequestConfigSpec) (string, string) {
	t.Helper()
	ns := cluster.Namespace(t, nil)
	prc := &kueue.ProvisioningRequestConfig{ObjectMeta: metav1.ObjectMeta{Name: cluster.Unique("prc")}, Spec: spec}
	ac := &kueue.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: cluster.Unique("prov")}, Spec: kueue.AdmissionCheckSpec{
		ControllerName: kueue.ProvisioningRequestControllerName,
		Parameters:     &kueue.AdmissionCheckParametersReference{APIGroup: kueue.GroupVersion.Group, Kind: "ProvisioningRequestConfig", Name: prc.Name}}}
	f := framework.Flavor(cluster.Unique("flavor"), map[string]string{"pool": "autoscaled"})
	cq := framework.ClusterQueue(cluster.Unique("cq"), "", framework.CPUQuota{Flavor: f.Name, Nominal: cpu})
	cq.Spec.AdmissionChecksStrategy = &kueue.AdmissionChecksStrategy{AdmissionChecks: []kueue.AdmissionCheckStrategyRule{{Name: ac.Name}}}
	cluster.MustCreate(t, prc, ac, f, cq, framework.LocalQueue(ns, "lq", cq.Name))
	// Active only once sluice found the config: the queue waits for it.
	cluster.WaitActive(t, cq)
	return ns, ac.Name
}

func request(t *testing.T, ns, name string) *autoscaling.ProvisioningRequest {
	t.Helper()
	pr := &autoscaling.ProvisioningRequest{}
	framework.Eventually(t, "ProvisioningRequest "+name, func(ctx context.Context) (bool, error) {
		return true, cluster.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pr)
	})
	return pr
}

// autoscale plays the autoscaler: it sets a condition of a request.
func autoscale(t *testing.T, pr *autoscaling.ProvisioningRequest, typ, message string, details map[string]autoscaling.Detail) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(pr), pr); err != nil {
			return err
		}
		meta.SetStatusCondition(&pr.Status.Conditions, metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: typ, Message: message})
		if details != nil {
			pr.Status.ProvisioningClassDetails = details
		}
		return cluster.Client.Status().Update(context.Background(), pr)
	})
	if err != nil {
		t.Fatalf("setting %s on ProvisioningRequest %s: %v", typ, pr.Name, err)
	}
}

func gone(t *testing.T, obj client.Object) {
	t.Helper()
	framework.Eventually(t, fmt.Sprintf("%T %s to be deleted", obj, obj.GetName()), func(ctx context.Context) (bool, error) {
		err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

func checkState(check string, state kueue.CheckState, parts ...string) func(*kueue.Workload) error {
	return func(wl *kueue.Workload) error {
		for _, c := range wl.Status.AdmissionChecks {
			if c.Name != check {
				continue
			}
			if c.State != state {
				return fmt.Errorf("check %s is %s (%s)", check, c.State, c.Message)
			}
			for _, p := range parts {
				if !strings.Contains(c.Message, p) {
					return fmt.Errorf("check message %q lacks %q", c.Message, p)
				}
			}
			return nil
		}
		return fmt.Errorf("no check %s: %+v", check, wl.Status.AdmissionChecks)
	}
}

// A Job in a ClusterQueue with a ProvisioningRequest check waits,
// suspended, for the request sluice makes (class, parameters, a template
// with the flavor's placement, the admitted count); once the autoscaler
// provisions, it starts with the pods consuming the request. Capacity
// revoked while it runs deactivates it; its requests go with the
// reservation.
func TestProvisionedCapacityStartsTheJob(t *testing.T) {
	ns, check := provisionedQueue(t, "4", kueue.ProvisioningRequestConfigSpec{ProvisioningClassName: class,
		Parameters: map[string]kueue.Parameter{"ValidUntilSeconds": "600"},
		PodSetUpdates: &kueue.ProvisioningRequestPodSetUpdates{NodeSelector: []kueue.ProvisioningRequestPodSetUpdatesNodeSelector{
			{Key: "cloud.example.com/reservation", ValueFromProvisioningClassDetail: "reservation"}}}})
	j := framework.Job(ns, cluster.Unique("job"), "lq", 2, "1")
	cluster.MustCreate(t, j)
	wl := framework.JobWorkload(j)
	cluster.WaitWorkload(t, wl, "waiting for its request", checkState(check, kueue.CheckStatePending, "ProvisioningRequest"))

	pr := request(t, ns, wl.Name+"-"+check+"-1")
	if pr.Spec.ProvisioningClassName != class || pr.Spec.Parameters["ValidUntilSeconds"] != "600" || len(pr.Spec.PodSets) != 1 || pr.Spec.PodSets[0].Count != 2 {
		t.Fatalf("request spec = %+v", pr.Spec)
	}
	if owner := metav1.GetControllerOf(pr); owner == nil || owner.Name != wl.Name || owner.Kind != "Workload" {
		t.Fatalf("request owner = %+v, want the Workload", owner)
	}
	tmpl := &corev1.PodTemplate{}
	if err := cluster.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: pr.Spec.PodSets[0].PodTemplateRef.Name}, tmpl); err != nil {
		t.Fatal(err)
	}
	if tmpl.Template.Spec.NodeSelector["pool"] != "autoscaled" || tmpl.Template.Spec.Containers[0].Resources.Requests.Cpu().String() != "1" {
		t.Fatalf("template = %+v, want the flavor's node labels and the pod's requests", tmpl.Template.Spec)
	}
	if current := getJob(t, j); !ptr.Deref(current.Spec.Suspend, false) {
		t.Fatal("the Job runs before its capacity is provisioned")
	}

	autoscale(t, pr, autoscaling.Provisioned, "capacity is ready", map[string]autoscaling.Detail{"reservation": "r-42"})
	cluster.WaitWorkload(t, wl, "admitted", func(wl *kueue.Workload) error {
		if !workload.IsAdmitted(wl) {
			return fmt.Errorf("not admitted: %v", wl.Status.Conditions)
		}
		return checkState(check, kueue.CheckStateReady, "capacity is ready")(wl)
	})
	var running *batchv1.Job
	framework.Eventually(t, "the Job to run", func(ctx context.Context) (bool, error) {
		running = getJob(t, j)
		return !ptr.Deref(running.Spec.Suspend, true), nil
	})
	pod := running.Spec.Template
	if pod.Annotations[autoscaling.ProvisioningRequestPodAnnotationKey] != pr.Name || pod.Annotations[autoscaling.ProvisioningClassPodAnnotationKey] != class ||
		pod.Spec.NodeSelector["cloud.example.com/reservation"] != "r-42" {
		t.Fatalf("the Job's pods don't consume the request: annotations %v, nodeSelector %v", pod.Annotations, pod.Spec.NodeSelector)
	}

	autoscale(t, pr, autoscaling.CapacityRevoked, "nodes reclaimed", nil)
	cluster.WaitWorkload(t, wl, "deactivated after the capacity was revoked", func(wl *kueue.Workload) error {
		c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted)
		if workload.IsActive(wl) || c == nil || c.Reason != "DeactivatedDueToAdmissionCheck" || !strings.Contains(c.Message, "nodes reclaimed") {
			return fmt.Errorf("active %v, Evicted %+v", workload.IsActive(wl), c)
		}
		return nil
	})
	framework.Eventually(t, "the Job to be suspended", func(ctx context.Context) (bool, error) {
		return ptr.Deref(getJob(t, j).Spec.Suspend, false), nil
	})
	cluster.SetJobStatus(t, j, func(current *batchv1.Job) { current.Status.StartTime, current.Status.Active = nil, 0 })
	gone(t, pr)
	gone(t, tmpl)
}

// A failed request is retried after the config's backoff with a new
// request (the next attempt), and past backoffLimitCount the check
// rejects the workload, which is deactivated naming why.
func TestFailedProvisioningRetriesThenRejects(t *testing.T) {
	ns, check := provisionedQueue(t, "4", kueue.ProvisioningRequestConfigSpec{ProvisioningClassName: class,
		RetryStrategy: &kueue.ProvisioningRequestRetryStrategy{BackoffLimitCount: ptr.To[int32](1), BackoffBaseSeconds: ptr.To[int32](1), BackoffMaxSeconds: ptr.To[int32](1)}})
	wl := framework.Workload(ns, "wl", "lq", 0, 1, "1")
	cluster.MustCreate(t, wl)
	first := request(t, ns, "wl-"+check+"-1")
	autoscale(t, first, autoscaling.Failed, "out of stock", nil)
	cluster.WaitWorkload(t, wl, "evicted to retry", func(wl *kueue.Workload) error {
		c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != kueue.EvictedByAdmissionCheck || !strings.Contains(c.Message, "out of stock") {
			return fmt.Errorf("Evicted: %+v", c)
		}
		return nil
	})
	second := request(t, ns, "wl-"+check+"-2")
	gone(t, first)
	got := cluster.WaitWorkload(t, wl, "reserved again for the second attempt", checkState(check, kueue.CheckStatePending))
	if c := got.Status.AdmissionChecks[0]; ptr.Deref(c.RetryCount, 0) != 1 {
		t.Fatalf("retryCount = %v, want 1", c.RetryCount)
	}
	autoscale(t, second, autoscaling.Failed, "still out of stock", nil)
	cluster.WaitWorkload(t, wl, "deactivated by the rejection", func(wl *kueue.Workload) error {
		c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted)
		if workload.IsActive(wl) || framework.Reserved(wl) || c == nil || c.Reason != "DeactivatedDueToAdmissionCheck" ||
			!strings.Contains(c.Message, "still out of stock") || !strings.Contains(c.Message, "backoffLimitCount 1") {
			return fmt.Errorf("active %v, reserved %v, Evicted %+v", workload.IsActive(wl), framework.Reserved(wl), c)
		}
		return nil
	})
	gone(t, second)
}

// A workload none of whose pod sets requests a managed resource needs no
// capacity: its check is Ready at once and no request is made.
func TestUnmanagedResourcesNeedNoRequest(t *testing.T) {
	ns, check := provisionedQueue(t, "4", kueue.ProvisioningRequestConfigSpec{ProvisioningClassName: class,
		ManagedResources: []corev1.ResourceName{"nvidia.com/gpu"}})
	wl := framework.Workload(ns, "cpu-only", "lq", 0, 1, "1")
	cluster.MustCreate(t, wl)
	cluster.WaitAdmitted(t, wl)
	if err := checkState(check, kueue.CheckStateReady, "nothing to provision")(wl); err != nil {
		t.Fatal(err)
	}
	list := &autoscaling.ProvisioningRequestList{}
	if err := cluster.Client.List(context.Background(), list, client.InNamespace(ns)); err != nil || len(list.Items) != 0 {
		t.Fatalf("requests %d (err %v), want none", len(list.Items), err)
	}
}

func getJob(t *testing.T, j *batchv1.Job) *batchv1.Job {
	t.Helper()
	out := &batchv1.Job{}
	if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(j), out); err != nil {
		t.Fatal(err)
	}
	return out
}

// A tenant who creates, before sluice, a request under the name sluice
// would use and marks it Provisioned gets nothing from it: sluice only
// trusts requests its Workload controls, so the check stays Pending, the
// Workload unadmitted, and the tenant's request is left alone.
func TestForeignRequestUnderSluicesNameIsNotTrusted(t *testing.T) {
	ns, check := provisionedQueue(t, "4", kueue.ProvisioningRequestConfigSpec{ProvisioningClassName: class})
	tmpl := &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "squatter"},
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "pause"}}}}}
	forged := &autoscaling.ProvisioningRequest{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wl-" + check + "-1"},
		Spec: autoscaling.ProvisioningRequestSpec{ProvisioningClassName: class,
			PodSets: []autoscaling.PodSet{{PodTemplateRef: autoscaling.Reference{Name: tmpl.Name}, Count: 1}}}}
	cluster.MustCreate(t, tmpl, forged)
	autoscale(t, forged, autoscaling.Provisioned, "forged", nil)

	wl := framework.Workload(ns, "wl", "lq", 0, 1, "1")
	cluster.MustCreate(t, wl)
	got := cluster.WaitWorkload(t, wl, "waiting, the forged request not used", checkState(check, kueue.CheckStatePending, "not controlled by"))
	if workload.IsAdmitted(got) {
		t.Fatal("admitted through a request it does not control")
	}
	if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(forged), forged); err != nil {
		t.Fatalf("the tenant's own request was touched: %v", err)
	}
}
