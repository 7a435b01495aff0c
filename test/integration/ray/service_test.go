package ray

import (
	"context"
	"maps"
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration/ray"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// newRayService is a RayService in LocalQueue lq (none when empty) whose
// clusters are 3 CPU each.
func newRayService(ns, lq string) *rayv1.RayService {
	rs := &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster.Unique("rayservice")},
		Spec: rayv1.RayServiceSpec{RayClusterSpec: *clusterSpec()}}
	if lq != "" {
		rs.Labels = map[string]string{kueue.QueueNameLabel: lq}
	}
	return rs
}

// serviceCluster is a RayCluster of the service as KubeRay creates it: the
// service's labels and cluster spec, the service its controller.
func serviceCluster(rs *rayv1.RayService, suffix string) *rayv1.RayCluster {
	labels := maps.Clone(rs.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels["ray.io/originated-from-cr-name"] = rs.Name
	return &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: rs.Namespace, Name: rs.Name + "-raycluster-" + suffix, Labels: labels,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rs, rayv1.SchemeGroupVersion.WithKind("RayService"))}},
		Spec: *rs.Spec.RayClusterSpec.DeepCopy()}
}

// A RayService is queued through its clusters: each is a queued RayCluster
// (its owner, the service, doesn't exempt it), and the second cluster of a
// zero-downtime upgrade waits for quota of its own while the first runs.
func TestRayServiceIsQueuedThroughItsClusters(t *testing.T) {
	ns, flavor := newQueue(t, "4")
	rs := newRayService(ns, "lq")
	cluster.MustCreate(t, rs)
	if rs.Spec.RayClusterSpec.Suspend != nil {
		t.Fatalf("the RayService was changed: rayClusterConfig.suspend %v", *rs.Spec.RayClusterSpec.Suspend)
	}

	first := serviceCluster(rs, "first")
	cluster.MustCreate(t, first)
	if !ptr.Deref(first.Spec.Suspend, false) {
		t.Fatal("the webhook did not create the service's RayCluster suspended")
	}
	wl := cluster.WaitWorkload(t, workloadOf(first, ray.ClusterKind), "to be admitted", framework.Admitted)
	if got := podSetsOf(wl); got != "head=1,workers=2" || wl.Spec.QueueName != "lq" {
		t.Errorf("pod sets %s in queue %q, want head=1,workers=2 in lq", got, wl.Spec.QueueName)
	}
	started := waitFor(t, first, "to run", running)
	if started.Spec.HeadGroupSpec.Template.Spec.NodeSelector["pool"] != flavor {
		t.Errorf("head nodeSelector %v, want the flavor's pool", started.Spec.HeadGroupSpec.Template.Spec.NodeSelector)
	}

	// An upgrade: KubeRay prepares a new cluster next to the serving one.
	second := serviceCluster(rs, "second")
	cluster.MustCreate(t, second)
	pending := workloadOf(second, ray.ClusterKind)
	cluster.WaitPending(t, pending, kueue.ReasonWaitingForQuota)
	waitFor(t, second, "to stay suspended while the first cluster holds the quota", suspended)
	// KubeRay rewrites a cluster's spec from the service's (suspend unset)
	// when it adds a worker group: the waiting cluster stays suspended.
	framework.Update(t, cluster.Client, second, func() { second.Spec.Suspend = nil })
	if err := suspended(second); err != nil {
		t.Fatalf("a waiting cluster rewritten unsuspended was let through: %v", err)
	}

	// The new cluster took over and KubeRay deleted the old one.
	if err := cluster.Client.Delete(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	cluster.WaitWorkload(t, pending, "to be admitted once the old cluster is gone", framework.Admitted)
	waitFor(t, second, "to run", running)
}

// The webhook refuses on a queued RayService what its clusters' admission
// would refuse (KubeRay could only fail to create them), and binds no
// RayService sluice doesn't queue.
func TestRayServiceWebhookRules(t *testing.T) {
	ns, _ := newQueue(t, "4")
	for _, tc := range []struct {
		name   string
		mutate func(*rayv1.RayService)
		want   string
	}{
		{"autoscaling without a bound", func(rs *rayv1.RayService) {
			rs.Spec.RayClusterSpec.EnableInTreeAutoscaling = ptr.To(true)
			rs.Spec.RayClusterSpec.WorkerGroupSpecs[0].MaxReplicas = nil
		}, "spec.rayClusterConfig.workerGroupSpecs[0].maxReplicas: Required"},
		{"an incremental upgrade", func(rs *rayv1.RayService) {
			rs.Spec.UpgradeStrategy = &rayv1.RayServiceUpgradeStrategy{Type: ptr.To(rayv1.NewClusterWithIncrementalUpgrade)}
		}, `spec.upgradeStrategy.type: Unsupported value: "NewClusterWithIncrementalUpgrade"`},
		{"group names equal in lower case", func(rs *rayv1.RayService) {
			wg := rs.Spec.RayClusterSpec.WorkerGroupSpecs[0]
			wg.GroupName = "workers"
			rs.Spec.RayClusterSpec.WorkerGroupSpecs = append(rs.Spec.RayClusterSpec.WorkerGroupSpecs, wg)
		}, "spec.rayClusterConfig.workerGroupSpecs[1].groupName: Duplicate value"},
		{"a standalone worker template", func(rs *rayv1.RayService) {
			rs.Spec.RayClusterSpec.WorkerGroupSpecs[0].Template.Annotations = map[string]string{kueue.StandaloneAnnotation: "true"}
		}, "spec.rayClusterConfig.workerGroupSpecs[0].template.metadata.annotations[kueue.x-k8s.io/standalone]: Forbidden"},
		{"a malformed queue name", func(rs *rayv1.RayService) { rs.Labels[kueue.QueueNameLabel] = "Not_A_Queue" },
			"metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := newRayService(ns, "lq")
			tc.mutate(rs)
			err := cluster.Client.Create(context.Background(), rs)
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("create: %v, want Invalid with %q", err, tc.want)
			}
		})
	}

	// An accepted service can't be edited into one of them either.
	rs := newRayService(ns, "lq")
	cluster.MustCreate(t, rs)
	rs.Spec.UpgradeStrategy = &rayv1.RayServiceUpgradeStrategy{Type: ptr.To(rayv1.NewClusterWithIncrementalUpgrade)}
	if err := cluster.Client.Update(context.Background(), rs); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.upgradeStrategy.type") {
		t.Fatalf("update: %v, want Invalid naming spec.upgradeStrategy.type", err)
	}

	other := cluster.Unique("unmanaged")
	cluster.MustCreate(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: other}})
	free := newRayService(other, "")
	free.Spec.UpgradeStrategy = &rayv1.RayServiceUpgradeStrategy{Type: ptr.To(rayv1.NewClusterWithIncrementalUpgrade)}
	cluster.MustCreate(t, free)
}

// A Pod naming a RayService as its controller (KubeRay never makes one) is
// not exempt from queueing: the service counts nothing itself.
func TestPodClaimingARayServiceIsQueued(t *testing.T) {
	ns, _ := newQueue(t, "4")
	rs := newRayService(ns, "lq")
	cluster.MustCreate(t, rs)
	tmpl := podTemplate("1")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster.Unique("forged"),
		Labels:          map[string]string{kueue.QueueNameLabel: "lq"},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rs, rayv1.SchemeGroupVersion.WithKind("RayService"))}},
		Spec: tmpl.Spec}
	cluster.MustCreate(t, pod)
	if len(pod.Spec.SchedulingGates) == 0 || pod.Labels[kueue.ManagedLabel] != "true" {
		t.Fatalf("a Pod owned by a RayService was not queued: gates %v labels %v", pod.Spec.SchedulingGates, pod.Labels)
	}
}
