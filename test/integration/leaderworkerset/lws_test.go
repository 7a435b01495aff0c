package leaderworkerset

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	lwsapi "sigs.k8s.io/lws/api/leaderworkerset/v1"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration/leaderworkerset"
	"github.com/sluicehq/sluice/test/integration/framework"
)

func newQueue(t *testing.T, cpu string) string {
	t.Helper()
	ns, _ := cluster.NewQueue(t, "lws", cpu)
	return ns
}

func podTemplate() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}
}

// newLWS is a LeaderWorkerSet of replicas groups of size pods (a leader
// and size-1 workers) of 1 CPU, in LocalQueue lq.
func newLWS(ns string, replicas, size int32) *lwsapi.LeaderWorkerSet {
	leader := podTemplate()
	return &lwsapi.LeaderWorkerSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster.Unique("lws"), Labels: map[string]string{kueue.QueueNameLabel: "lq"}},
		Spec: lwsapi.LeaderWorkerSetSpec{Replicas: ptr.To(replicas), LeaderWorkerTemplate: lwsapi.LeaderWorkerTemplate{
			Size: ptr.To(size), LeaderTemplate: &leader, WorkerTemplate: podTemplate(),
			RestartPolicy: lwsapi.RecreateGroupOnPodRestart,
		},
			RolloutStrategy: lwsapi.RolloutStrategy{Type: lwsapi.RollingUpdateStrategyType},
			StartupPolicy:   lwsapi.LeaderCreatedStartupPolicy,
		}}
}

// groupPods creates the Pods of group index as LeaderWorkerSet would: the
// leader by the leader StatefulSet (labelled with its group index by
// LeaderWorkerSet's Pod webhook), the workers by a StatefulSet the leader
// owns.
func groupPods(t *testing.T, lws *lwsapi.LeaderWorkerSet, leaderSet *appsv1.StatefulSet, index int) []*corev1.Pod {
	t.Helper()
	size := int(*lws.Spec.LeaderWorkerTemplate.Size)
	labels := func(worker int) map[string]string {
		return map[string]string{lwsapi.SetNameLabelKey: lws.Name, lwsapi.GroupIndexLabelKey: strconv.Itoa(index), lwsapi.WorkerIndexLabelKey: strconv.Itoa(worker)}
	}
	fromTemplate := func(name string, tmpl corev1.PodTemplateSpec, worker int, owner metav1.OwnerReference) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: *tmpl.ObjectMeta.DeepCopy(), Spec: tmpl.Spec}
		p.Namespace, p.Name, p.OwnerReferences = lws.Namespace, name, []metav1.OwnerReference{owner}
		maps.Copy(p.Labels, labels(worker))
		p.Annotations[lwsapi.SizeAnnotationKey] = strconv.Itoa(size)
		return p
	}
	leader := fromTemplate(fmt.Sprintf("%s-%d", lws.Name, index), *lws.Spec.LeaderWorkerTemplate.LeaderTemplate, 0,
		*metav1.NewControllerRef(leaderSet, appsv1.SchemeGroupVersion.WithKind("StatefulSet")))
	cluster.MustCreate(t, leader)
	workerSet := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: lws.Namespace, Name: leader.Name,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(leader, corev1.SchemeGroupVersion.WithKind("Pod"))}},
		Spec: appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels(1)}, Template: lws.Spec.LeaderWorkerTemplate.WorkerTemplate}}
	workerSet.Spec.Template.Labels = labels(1)
	cluster.MustCreate(t, workerSet)
	pods := []*corev1.Pod{leader}
	for w := 1; w < size; w++ {
		worker := fromTemplate(fmt.Sprintf("%s-%d-%d", lws.Name, index, w), lws.Spec.LeaderWorkerTemplate.WorkerTemplate, w,
			*metav1.NewControllerRef(workerSet, appsv1.SchemeGroupVersion.WithKind("StatefulSet")))
		cluster.MustCreate(t, worker)
		pods = append(pods, worker)
	}
	return pods
}

// createLWS creates the LeaderWorkerSet and its leader StatefulSet.
func createLWS(t *testing.T, lws *lwsapi.LeaderWorkerSet) *appsv1.StatefulSet {
	t.Helper()
	cluster.MustCreate(t, lws)
	leaderSet := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: lws.Namespace, Name: lws.Name,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(lws, lwsapi.SchemeGroupVersion.WithKind("LeaderWorkerSet"))}},
		Spec: appsv1.StatefulSetSpec{Replicas: lws.Spec.Replicas, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{lwsapi.SetNameLabelKey: lws.Name}},
			Template: *lws.Spec.LeaderWorkerTemplate.LeaderTemplate}}
	leaderSet.Spec.Template.Labels[lwsapi.SetNameLabelKey] = lws.Name
	cluster.MustCreate(t, leaderSet)
	return leaderSet
}

func gated(p *corev1.Pod) bool {
	return len(p.Spec.SchedulingGates) > 0
}

func waitPods(t *testing.T, pods []*corev1.Pod, what string, cond func(*corev1.Pod) error) {
	t.Helper()
	for _, p := range pods {
		current := &corev1.Pod{}
		framework.Eventually(t, p.Name+" "+what, func(ctx context.Context) (bool, error) {
			if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(p), current); err != nil {
				return false, err
			}
			return true, cond(current)
		})
	}
}

func TestWebhookSendsTheTemplatesToTheQueue(t *testing.T) {
	ns := newQueue(t, "4")
	lws := newLWS(ns, 1, 2)
	cluster.MustCreate(t, lws)
	for name, tmpl := range map[string]*corev1.PodTemplateSpec{"leader": lws.Spec.LeaderWorkerTemplate.LeaderTemplate, "worker": &lws.Spec.LeaderWorkerTemplate.WorkerTemplate} {
		if tmpl.Labels[kueue.QueueNameLabel] != "lq" || tmpl.Annotations[kueue.PodSuspendingParentAnno] != leaderworkerset.Framework ||
			tmpl.Annotations[kueue.PodGroupServingAnno] != "true" || tmpl.Annotations[kueue.PodGroupFastAdmissionAnno] != "true" {
			t.Errorf("%s template labels %v annotations %v", name, tmpl.Labels, tmpl.Annotations)
		}
		if _, ok := tmpl.Labels[kueue.PodGroupNameLabel]; ok {
			t.Errorf("%s template names a pod group: every group shares it", name)
		}
	}
}

// Each group (a leader and its workers) is admitted as a unit; a group
// that does not fit waits, and is admitted once another group's Pods are
// gone (scaled down).
func TestEachGroupIsAdmittedAsAUnit(t *testing.T) {
	ns := newQueue(t, "4")
	lws := newLWS(ns, 2, 3)
	leaderSet := createLWS(t, lws)
	first := groupPods(t, lws, leaderSet, 0)
	second := groupPods(t, lws, leaderSet, 1)
	for _, p := range append(append([]*corev1.Pod{}, first...), second...) {
		if !gated(p) || p.Labels[kueue.ManagedLabel] != "true" {
			t.Fatalf("pod %s: gates %v labels %v, want queued", p.Name, p.Spec.SchedulingGates, p.Labels)
		}
		index := p.Labels[lwsapi.GroupIndexLabelKey]
		if p.Labels[kueue.PodGroupNameLabel] != leaderworkerset.GroupName(lws.Name, index) || p.Annotations[kueue.PodGroupTotalCountAnno] != "3" {
			t.Fatalf("pod %s: group %q of %q, want %s of 3", p.Name, p.Labels[kueue.PodGroupNameLabel], p.Annotations[kueue.PodGroupTotalCountAnno], leaderworkerset.GroupName(lws.Name, index))
		}
	}
	waitPods(t, first, "to be admitted with its group", func(p *corev1.Pod) error {
		if gated(p) {
			return fmt.Errorf("gated")
		}
		return nil
	})
	// A pod group's Workload is named after the group.
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: leaderworkerset.GroupName(lws.Name, "1")}}
	cluster.WaitPending(t, wl, kueue.ReasonWaitingForQuota, "insufficient quota for cpu", "requests 3, available 1")
	for _, p := range second {
		current := &corev1.Pod{}
		if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(p), current); err != nil {
			t.Fatal(err)
		}
		if !gated(current) {
			t.Fatalf("pod %s of the second group started without its group", p.Name)
		}
	}
	// Scaled down: the first group's Pods go, and the second group fits.
	for _, p := range first {
		if err := cluster.Client.Delete(context.Background(), p, client.GracePeriodSeconds(0)); err != nil {
			t.Fatal(err)
		}
	}
	waitPods(t, second, "to be admitted once the first group is gone", func(p *corev1.Pod) error {
		if gated(p) {
			return fmt.Errorf("gated")
		}
		return nil
	})
	if err := framework.CheckQuotaInvariant(context.Background(), cluster.Client); err != nil {
		t.Fatal(err)
	}
}

func TestQueueOfARunningLeaderWorkerSetIsKept(t *testing.T) {
	ns := newQueue(t, "4")
	lws := newLWS(ns, 1, 2)
	cluster.MustCreate(t, lws)
	lws.Status.Replicas = 1
	if err := cluster.Client.Status().Update(context.Background(), lws); err != nil {
		t.Fatal(err)
	}
	lws.Labels[kueue.QueueNameLabel] = "other"
	err := cluster.Client.Update(context.Background(), lws)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "can change only while the LeaderWorkerSet has no Pods") {
		t.Fatalf("queue change with Pods: %v", err)
	}
}

// A tenant's own Pod dressed as a member of an admitted group (the
// LeaderWorkerSet's labels, the parent annotation, a larger size) does
// not run on the group's admission: it is refused or waits gated, and the
// queue never holds more than its quota. (Starting a group's Pod injects
// its flavor's node selector, which changes the Pod's shape: the room left
// in the admission is counted by the podSet a Pod was started as.) A
// larger size makes the group grow: it is evicted and waits for quota at
// its new size, which disrupts only the tenant's own namespace.
func TestForeignPodCannotJoinAnAdmittedGroup(t *testing.T) {
	ns := newQueue(t, "2")
	lws := newLWS(ns, 1, 2)
	leaderSet := createLWS(t, lws)
	group := groupPods(t, lws, leaderSet, 0)
	waitPods(t, group, "to be admitted with its group", func(p *corev1.Pod) error {
		if gated(p) {
			return fmt.Errorf("gated")
		}
		return nil
	})
	for _, size := range []string{"2", "3"} {
		intruder := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster.Unique("intruder"),
			Labels: map[string]string{kueue.QueueNameLabel: "lq", lwsapi.SetNameLabelKey: lws.Name, lwsapi.GroupIndexLabelKey: "0", lwsapi.WorkerIndexLabelKey: "1"},
			Annotations: map[string]string{kueue.PodSuspendingParentAnno: leaderworkerset.Framework, lwsapi.SizeAnnotationKey: size,
				kueue.PodGroupServingAnno: "true", kueue.PodGroupFastAdmissionAnno: "true"}},
			Spec: podTemplate().Spec}
		if err := cluster.Client.Create(context.Background(), intruder); err != nil {
			if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) {
				t.Fatalf("size %s: creating the intruder: %v", size, err)
			}
			continue
		}
		// The group's reconciler reacts within milliseconds: the intruder
		// must stay gated for a while after.
		framework.Holds(t, "the intruder (size "+size+") to stay gated", 3*time.Second, func(ctx context.Context) error {
			current := &corev1.Pod{}
			if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(intruder), current); err != nil {
				return err
			}
			if !gated(current) {
				return fmt.Errorf("the intruder runs on the group's admission (labels %v)", current.Labels)
			}
			return nil
		})
		if err := framework.CheckQuotaInvariant(context.Background(), cluster.Client); err != nil {
			t.Fatal(err)
		}
	}
}
