package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

func gatedBySluice(p *corev1.Pod) bool {
	return slices.ContainsFunc(p.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == kueue.AdmissionSchedulingGate })
}

// podCounts counts the namespace's Pods matching labels: Running, and
// waiting at sluice's gate.
func podCounts(ctx context.Context, c client.Client, ns string, labels map[string]string) (running, gated int, err error) {
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels(labels)); err != nil {
		return 0, 0, err
	}
	for _, p := range pods.Items {
		switch {
		case gatedBySluice(&p):
			gated++
		case p.Status.Phase == corev1.PodRunning:
			running++
		}
	}
	return running, gated, nil
}

// In a 4-CPU queue where a 1-CPU Job runs, a Deployment of four 1-CPU
// replicas gets three Pods running and the fourth gated; the fourth starts
// when the Job completes.
func TestDeploymentPodsQueue(t *testing.T) {
	c := sharedClient(t)
	e2eQueue(t, c, "e2e-deploy", "on-demand", "4")
	job := queuedJob("e2e-deploy", "first", 1, "15s")
	if err := c.Create(t.Context(), job); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Job to run", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
			return false, err
		}
		return job.Status.Active == 1, nil
	})
	labels := map[string]string{"app": "server"}
	tmpl := podTemplate(labels, "")
	tmpl.Spec.RestartPolicy = corev1.RestartPolicyAlways
	tmpl.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "e2e-deploy", Name: "server", Labels: map[string]string{kueue.QueueNameLabel: "lq"}},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](4), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl},
	}
	if err := c.Create(t.Context(), deploy); err != nil {
		t.Fatal(err)
	}
	eventually(t, "three replicas running and one gated", func(ctx context.Context) (bool, error) {
		running, gated, err := podCounts(ctx, c, "e2e-deploy", labels)
		return running == 3 && gated == 1, err
	})
	// The Job ends and frees its CPU for the fourth replica.
	eventually(t, "the fourth replica to run once the Job completed", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
			return false, err
		}
		if !hasCondition(job.Status.Conditions, batchv1.JobComplete) {
			return false, nil
		}
		running, gated, err := podCounts(ctx, c, "e2e-deploy", labels)
		return running == 4 && gated == 0, err
	})
}

// The Spark-like scenario: a driver Pod owns three executor Pods with
// standalone; with quota for the driver and two executors, the third waits
// and runs when one ends.
func TestSparkLikeExecutorsQueue(t *testing.T) {
	c := sharedClient(t)
	e2eQueue(t, c, "e2e-spark", "on-demand", "3")
	pod := func(name, runFor string, owner *corev1.Pod) *corev1.Pod {
		tmpl := podTemplate(map[string]string{kueue.QueueNameLabel: "lq", "role": name[:6]}, runFor)
		tmpl.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "e2e-spark", Name: name, Labels: tmpl.Labels, Annotations: tmpl.Annotations}, Spec: tmpl.Spec}
		if owner != nil {
			p.Annotations[kueue.StandaloneAnnotation] = "true"
			p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, corev1.SchemeGroupVersion.WithKind("Pod"))}
		}
		return p
	}
	driver := pod("driver", "", nil)
	if err := c.Create(t.Context(), driver); err != nil {
		t.Fatal(err)
	}
	for i, runFor := range []string{"5s", "60s", "60s"} {
		if err := c.Create(t.Context(), pod(fmt.Sprintf("execut-%d", i), runFor, driver)); err != nil {
			t.Fatal(err)
		}
	}
	executors := map[string]string{"role": "execut"}
	eventually(t, "two executors running and one gated", func(ctx context.Context) (bool, error) {
		running, gated, err := podCounts(ctx, c, "e2e-spark", executors)
		return running == 2 && gated == 1, err
	})
	eventually(t, "the third executor to run after the first ended", func(ctx context.Context) (bool, error) {
		running, gated, err := podCounts(ctx, c, "e2e-spark", executors)
		return running == 2 && gated == 0, err
	})
}

// A group of three 1-CPU Pods in a queue with 2 CPU: nothing runs; with
// 3 CPU, all three start together.
func TestPodGroupRunsAllOrNothing(t *testing.T) {
	c := sharedClient(t)
	e2eQueue(t, c, "e2e-group", "on-demand", "2")
	labels := map[string]string{"role": "gang"}
	for i := range 3 {
		tmpl := podTemplate(map[string]string{kueue.QueueNameLabel: "lq", kueue.PodGroupNameLabel: "gang", "role": "gang"}, "")
		tmpl.Annotations[kueue.PodGroupTotalCountAnno] = "3"
		tmpl.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "e2e-group", Name: fmt.Sprintf("gang-%d", i), Labels: tmpl.Labels, Annotations: tmpl.Annotations}, Spec: tmpl.Spec}
		if err := c.Create(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "the group to wait for quota", func(ctx context.Context) (bool, error) {
		wl := &kueue.Workload{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "e2e-group", Name: "gang"}, wl); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		for _, cond := range wl.Status.Conditions {
			// ExceedsMaxQuota: 3 CPU can't fit in this queue's 2, yet.
			if cond.Type == kueue.WorkloadQuotaReserved && cond.Status == metav1.ConditionFalse {
				return true, nil
			}
		}
		return false, nil
	})
	if running, gated, err := podCounts(t.Context(), c, "e2e-group", labels); err != nil || running != 0 || gated != 3 {
		t.Fatalf("%d running, %d gated (err %v), want none running while quota is short", running, gated, err)
	}
	cq := &kueue.ClusterQueue{}
	if err := c.Get(t.Context(), client.ObjectKey{Name: "e2e-group"}, cq); err != nil {
		t.Fatal(err)
	}
	cq.Spec.ResourceGroups[0].Flavors[0].Resources[0].NominalQuota = resource.MustParse("3")
	if err := c.Update(t.Context(), cq); err != nil {
		t.Fatal(err)
	}
	eventually(t, "all three Pods running", func(ctx context.Context) (bool, error) {
		running, gated, err := podCounts(ctx, c, "e2e-group", labels)
		return running == 3 && gated == 0, err
	})
}

// A StatefulSet of three replicas is admitted as one group; scaled up it is
// admitted again at its new size, scaled down it gives quota back without
// restarting.
func TestStatefulSetAdmittedAsOneGroup(t *testing.T) {
	c := sharedClient(t)
	e2eQueue(t, c, "e2e-sts", "on-demand", "4")
	labels := map[string]string{"app": "db"}
	tmpl := podTemplate(labels, "")
	tmpl.Spec.RestartPolicy = corev1.RestartPolicyAlways
	tmpl.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "e2e-sts", Name: "db", Labels: map[string]string{kueue.QueueNameLabel: "lq"}},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3), Selector: &metav1.LabelSelector{MatchLabels: labels},
			ServiceName: "db", Template: tmpl},
	}
	if err := c.Create(t.Context(), sts); err != nil {
		t.Fatal(err)
	}
	eventually(t, "three replicas ready", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(sts), sts); err != nil {
			return false, err
		}
		return sts.Status.ReadyReplicas == 3, nil
	})
	list := &kueue.WorkloadList{}
	if err := c.List(t.Context(), list, client.InNamespace("e2e-sts")); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "statefulset-db" || list.Items[0].Spec.PodSets[0].Count != 3 {
		var names []string
		for _, wl := range list.Items {
			names = append(names, wl.Name)
		}
		t.Errorf("Workloads %v, want one, statefulset-db, of 3 Pods", names)
	}
	scaleStatefulSet(t, c)
}

// scaleStatefulSet scales e2e-sts/db from 3 to 4 (admitted again whole)
// and to 2 (quota of two Pods given back).
func scaleStatefulSet(t *testing.T, c client.Client) {
	t.Helper()
	sts := &appsv1.StatefulSet{}
	key := client.ObjectKey{Namespace: "e2e-sts", Name: "db"}
	scale := func(replicas int32) {
		t.Helper()
		if err := c.Get(t.Context(), key, sts); err != nil {
			t.Fatal(err)
		}
		sts.Spec.Replicas = ptr.To(replicas)
		if err := c.Update(t.Context(), sts); err != nil {
			t.Fatal(err)
		}
	}
	groupWorkload := func(ctx context.Context) (*kueue.Workload, error) {
		wl := &kueue.Workload{}
		return wl, c.Get(ctx, client.ObjectKey{Namespace: "e2e-sts", Name: "statefulset-db"}, wl)
	}
	scale(4)
	eventually(t, "four replicas ready, admitted as a group of 4", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, key, sts); err != nil {
			return false, err
		}
		wl, err := groupWorkload(ctx)
		if err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return sts.Status.ReadyReplicas == 4 && wl.Status.Admission != nil && wl.Spec.PodSets[0].Count == 4, nil
	})
	scale(2)
	last := ""
	defer func() { t.Logf("last seen: %s", last) }()
	eventually(t, "the group to give back two Pods' quota", func(ctx context.Context) (bool, error) {
		wl, err := groupWorkload(ctx)
		if err != nil {
			return false, err
		}
		reclaimable := int32(0)
		for _, rp := range wl.Status.ReclaimablePods {
			reclaimable += rp.Count
		}
		cq := &kueue.ClusterQueue{}
		if err := c.Get(ctx, client.ObjectKey{Name: "e2e-sts"}, cq); err != nil {
			return false, err
		}
		if len(cq.Status.FlavorsUsage) == 0 || len(cq.Status.FlavorsUsage[0].Resources) == 0 {
			return false, nil
		}
		used := cq.Status.FlavorsUsage[0].Resources[0].Total
		last = fmt.Sprintf("uid %s reclaimable %v, counts %v, usage %s, conditions %v", wl.UID, wl.Status.ReclaimablePods, wl.Spec.PodSets[0].Count, used.String(), wl.Status.Conditions)
		return reclaimable == 2 && used.Cmp(resource.MustParse("2")) == 0, nil
	})

	// A rolling update replaces both Pods within the admission.
	before, err := groupWorkload(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Get(t.Context(), key, sts); err != nil {
		t.Fatal(err)
	}
	sts.Spec.Template.Annotations["rollout"] = "2"
	if err := c.Update(t.Context(), sts); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the rolling update to finish", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, key, sts); err != nil {
			return false, err
		}
		return sts.Status.UpdatedReplicas == 2 && sts.Status.ReadyReplicas == 2 && sts.Status.CurrentRevision == sts.Status.UpdateRevision, nil
	})
	after, err := groupWorkload(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if after.UID != before.UID || after.Status.Admission == nil {
		t.Errorf("the group lost its admission in the rolling update (uid %s -> %s)", before.UID, after.UID)
	}
}
