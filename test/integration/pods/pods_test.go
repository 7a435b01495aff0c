package pods

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
	"github.com/sluicehq/sluice/internal/integration/pod"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// newQueue creates a namespace with LocalQueue "lq" in front of its own
// ClusterQueue with cpu quota in one flavor.
func newQueue(t *testing.T, cpu string) (string, *kueue.ResourceFlavor) {
	t.Helper()
	ns := cluster.Unique("pods")
	flavor := &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: cluster.Unique("flavor")},
		Spec: kueue.ResourceFlavorSpec{NodeLabels: map[string]string{"pool": "p1"}}}
	cq := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: cluster.Unique("cq")}, Spec: kueue.ClusterQueueSpec{
		NamespaceSelector: &metav1.LabelSelector{},
		ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
			Flavors: []kueue.FlavorQuotas{{Name: kueue.ResourceFlavorReference(flavor.Name),
				Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse(cpu)}}}}}},
	}}
	cluster.MustCreate(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, flavor, cq,
		&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lq"}, Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(cq.Name)}})
	framework.Eventually(t, cq.Name+" to be active", func(ctx context.Context) (bool, error) {
		current := &kueue.ClusterQueue{}
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(cq), current); err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(current.Status.Conditions, kueue.ConditionActive), nil
	})
	return ns, flavor
}

// newPod is a Pod of 1 CPU, in LocalQueue lq unless lq is empty.
func newPod(ns, lq string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster.Unique("pod")}, Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{Name: "main", Image: "busybox",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}},
	}}
	if lq != "" {
		p.Labels = map[string]string{kueue.QueueNameLabel: lq}
	}
	return p
}

func ownedBy(p *corev1.Pod, owner client.Object, kind string, apiVersion string) {
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: owner.GetName(), UID: owner.GetUID(), Controller: ptr.To(true)}}
}

func standalone(p *corev1.Pod) *corev1.Pod {
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[kueue.StandaloneAnnotation] = "true"
	return p
}

func isGated(p *corev1.Pod) bool {
	return slices.ContainsFunc(p.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == kueue.AdmissionSchedulingGate })
}

func queued(p *corev1.Pod) bool {
	return isGated(p) && p.Labels[kueue.ManagedLabel] == "true" && slices.Contains(p.Finalizers, kueue.ManagedLabel)
}

func workloadOf(p *corev1.Pod) *kueue.Workload {
	return &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: integration.WorkloadName(pod.Kind.GVK, p.Name, p.UID)}}
}

func waitPod(t *testing.T, p *corev1.Pod, what string, cond func(*corev1.Pod) error) *corev1.Pod {
	t.Helper()
	current := &corev1.Pod{}
	framework.Eventually(t, fmt.Sprintf("Pod %s %s", p.Name, what), func(ctx context.Context) (bool, error) {
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(p), current); err != nil {
			return false, err
		}
		return true, cond(current)
	})
	return current
}

func ungated(p *corev1.Pod) error {
	if isGated(p) {
		return fmt.Errorf("still gated")
	}
	return nil
}

func waitWorkload(t *testing.T, p *corev1.Pod, what string, cond func(*kueue.Workload) error) *kueue.Workload {
	t.Helper()
	wl := workloadOf(p)
	framework.Eventually(t, fmt.Sprintf("the Workload of %s %s", p.Name, what), func(ctx context.Context) (bool, error) {
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(wl), wl); err != nil {
			return false, err
		}
		return true, cond(wl)
	})
	return wl
}

func finishedWith(reason string) func(*kueue.Workload) error {
	return func(wl *kueue.Workload) error {
		c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadFinished)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != reason {
			return fmt.Errorf("Finished %+v", c)
		}
		return nil
	}
}

func setPhase(t *testing.T, p *corev1.Pod, phase corev1.PodPhase) {
	t.Helper()
	current := &corev1.Pod{}
	if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(p), current); err != nil {
		t.Fatal(err)
	}
	current.Status.Phase = phase
	if err := cluster.Client.Status().Update(context.Background(), current); err != nil {
		t.Fatalf("setting %s to %s: %v", p.Name, phase, err)
	}
}

// noWorkloadFor checks that a Pod got no Workload, once a later queued Pod
// of the same namespace got its own (so the first was seen by then).
func noWorkloadFor(t *testing.T, p *corev1.Pod) {
	t.Helper()
	marker := newPod(p.Namespace, "lq")
	marker.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("0")
	cluster.MustCreate(t, marker)
	waitWorkload(t, marker, "to exist", func(*kueue.Workload) error { return nil })
	err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(workloadOf(p)), &kueue.Workload{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("Pod %s has a Workload (err %v)", p.Name, err)
	}
}

func TestPodIsGatedAdmittedAndFinished(t *testing.T) {
	ns, flavor := newQueue(t, "2")
	p := newPod(ns, "lq")
	cluster.MustCreate(t, p)
	if !queued(p) {
		t.Fatalf("created Pod: gates %v, labels %v, finalizers %v; want gated, managed, held", p.Spec.SchedulingGates, p.Labels, p.Finalizers)
	}
	started := waitPod(t, p, "to be ungated", ungated)
	if started.Spec.NodeSelector["pool"] != "p1" || started.Labels[kueue.PodSetLabel] != "main" {
		t.Errorf("nodeSelector %v, labels %v: want the flavor %s's pool=p1 and the podset label", started.Spec.NodeSelector, started.Labels, flavor.Name)
	}
	wl := waitWorkload(t, p, "to be admitted", func(wl *kueue.Workload) error {
		if wl.Status.Admission == nil {
			return fmt.Errorf("not admitted")
		}
		return nil
	})
	if owner := metav1.GetControllerOf(wl); owner == nil || owner.UID != p.UID || owner.Kind != "Pod" {
		t.Errorf("controller owner %+v, want the Pod", owner)
	}
	if gates := wl.Spec.PodSets[0].Template.Spec.SchedulingGates; len(gates) != 0 {
		t.Errorf("the Workload's template carries gates %v", gates)
	}

	setPhase(t, p, corev1.PodSucceeded)
	waitWorkload(t, p, "to finish", finishedWith(integration.FinishedReasonSucceeded))
	waitPod(t, p, "to lose its finalizer", func(p *corev1.Pod) error {
		if slices.Contains(p.Finalizers, kueue.ManagedLabel) {
			return fmt.Errorf("finalizers %v", p.Finalizers)
		}
		return nil
	})
}

func TestEvictionDeletesThePod(t *testing.T) {
	ns, _ := newQueue(t, "2")
	p := newPod(ns, "lq")
	cluster.MustCreate(t, p)
	waitPod(t, p, "to be ungated", ungated)
	setPhase(t, p, corev1.PodRunning)
	wl := waitWorkload(t, p, "to be admitted", func(wl *kueue.Workload) error {
		if wl.Status.Admission == nil {
			return fmt.Errorf("not admitted")
		}
		return nil
	})
	framework.Update(t, cluster.Client, wl, func() { wl.Spec.Active = ptr.To(false) })
	waitWorkload(t, p, "to finish as evicted", finishedWith(integration.FinishedReasonEvicted))
	framework.Eventually(t, "the evicted Pod to be gone", func(ctx context.Context) (bool, error) {
		err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(p), &corev1.Pod{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("still there (err %v)", err)
	})
}

// Spark-like: a driver Pod (queued) owns three executor Pods with
// standalone; 3 CPU: the driver and two executors run, the third waits
// until one ends.
func TestSparkExecutorsWithStandalone(t *testing.T) {
	ns, _ := newQueue(t, "3")
	driver := newPod(ns, "lq")
	cluster.MustCreate(t, driver)
	waitPod(t, driver, "to be ungated", ungated)
	var executors []*corev1.Pod
	for range 3 {
		e := standalone(newPod(ns, "lq"))
		ownedBy(e, driver, "Pod", "v1")
		cluster.MustCreate(t, e)
		if !queued(e) {
			t.Fatalf("executor %s not gated: %v", e.Name, e.Spec.SchedulingGates)
		}
		executors = append(executors, e)
	}
	var running []*corev1.Pod
	var waiting *corev1.Pod
	framework.Eventually(t, "two executors admitted, one gated", func(ctx context.Context) (bool, error) {
		running, waiting = nil, nil
		for _, e := range executors {
			current := &corev1.Pod{}
			if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(e), current); err != nil {
				return false, err
			}
			if isGated(current) {
				waiting = current
			} else {
				running = append(running, current)
			}
		}
		if len(running) != 2 || waiting == nil {
			return false, fmt.Errorf("%d running", len(running))
		}
		return true, nil
	})
	waitWorkload(t, running[0], "to be labelled standalone", func(wl *kueue.Workload) error {
		if wl.Labels[kueue.StandaloneAnnotation] != "true" {
			return fmt.Errorf("labels %v", wl.Labels)
		}
		return nil
	})
	setPhase(t, running[0], corev1.PodSucceeded)
	waitPod(t, waiting, "to start once an executor ended", ungated)
}

func TestExecutorsWithoutStandaloneAreLeftToTheirDriver(t *testing.T) {
	ns, _ := newQueue(t, "3")
	driver := newPod(ns, "lq")
	cluster.MustCreate(t, driver)
	e := newPod(ns, "lq")
	ownedBy(e, driver, "Pod", "v1")
	cluster.MustCreate(t, e)
	if isGated(e) || e.Labels[kueue.ManagedLabel] == "true" {
		t.Fatalf("an executor without standalone was gated or labelled: %v %v", e.Spec.SchedulingGates, e.Labels)
	}
	noWorkloadFor(t, e)
}

func TestStandalonePodUnderAnUnqueuedJob(t *testing.T) {
	ns, _ := newQueue(t, "3")
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster.Unique("unqueued")}, Spec: batchv1.JobSpec{
		Template: newPodTemplate()}}
	cluster.MustCreate(t, job)
	p := standalone(newPod(ns, "lq"))
	ownedBy(p, job, "Job", "batch/v1")
	cluster.MustCreate(t, p)
	if !queued(p) {
		t.Fatalf("a standalone Pod under an unqueued Job was not gated: %v", p.Spec.SchedulingGates)
	}
	waitPod(t, p, "to be admitted alone", ungated)
}

func TestStandalonePodUnderAQueuedJobIsIgnored(t *testing.T) {
	ns, _ := newQueue(t, "3")
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster.Unique("queued"),
		Labels: map[string]string{kueue.QueueNameLabel: "lq"}}, Spec: batchv1.JobSpec{Template: newPodTemplate()}}
	cluster.MustCreate(t, job)
	p := standalone(newPod(ns, "lq"))
	ownedBy(p, job, "Job", "batch/v1")
	// The Job controller's labels, which the Job's selector selects by.
	maps.Copy(p.Labels, job.Spec.Selector.MatchLabels)
	cluster.MustCreate(t, p)
	if isGated(p) {
		t.Fatal("a standalone Pod under a queued Job was gated: its Job's Workload counts it")
	}
	noWorkloadFor(t, p)
	waitWarning(t, p, pod.EventStandaloneUnderQueuedParent, "Job "+job.Name)
}

func TestStandaloneWithoutQueueIsLeftAloneWithAWarning(t *testing.T) {
	ns, _ := newQueue(t, "3")
	driver := newPod(ns, "")
	cluster.MustCreate(t, driver)
	p := standalone(newPod(ns, ""))
	ownedBy(p, driver, "Pod", "v1")
	cluster.MustCreate(t, p)
	if isGated(p) {
		t.Fatal("a standalone Pod without a queue was gated")
	}
	waitWarning(t, p, pod.EventStandaloneWithoutQueue, "no LocalQueue applies")
}

// waitWarning waits for a Warning event on the Pod with the reason and a
// note containing part.
func waitWarning(t *testing.T, p *corev1.Pod, reason, part string) {
	t.Helper()
	framework.Eventually(t, fmt.Sprintf("a %s event on %s", reason, p.Name), func(ctx context.Context) (bool, error) {
		list := &eventsv1.EventList{}
		if err := cluster.Client.List(ctx, list, client.InNamespace(p.Namespace)); err != nil {
			return false, err
		}
		for _, e := range list.Items {
			if e.Regarding.UID == p.UID && e.Type == corev1.EventTypeWarning && e.Reason == reason && strings.Contains(e.Note, part) {
				return true, nil
			}
		}
		return false, fmt.Errorf("%d events in the namespace, none matching", len(list.Items))
	})
}

func newPodTemplate() corev1.PodTemplateSpec {
	p := newPod("", "")
	return corev1.PodTemplateSpec{Spec: p.Spec}
}

func TestQueuedJobWithStandaloneTemplateIsRefused(t *testing.T) {
	ns, _ := newQueue(t, "3")
	tmpl := newPodTemplate()
	tmpl.Annotations = map[string]string{kueue.StandaloneAnnotation: "true"}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster.Unique("double"),
		Labels: map[string]string{kueue.QueueNameLabel: "lq"}}, Spec: batchv1.JobSpec{Template: tmpl}}
	err := cluster.Client.Create(context.Background(), job)
	want := "pods of a queued Job are already counted by its Workload; remove kueue.x-k8s.io/standalone from the pod template, or the queue-name from the Job"
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want an Invalid error saying %q", err, want)
	}
}

func TestStandaloneValueAndImmutability(t *testing.T) {
	ns, _ := newQueue(t, "3")
	bad := newPod(ns, "lq")
	bad.Annotations = map[string]string{kueue.StandaloneAnnotation: "yes"}
	err := cluster.Client.Create(context.Background(), bad)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), kueue.StandaloneAnnotation) {
		t.Fatalf("standalone: \"yes\" gave %v, want an Invalid error naming the annotation", err)
	}
	for _, start := range []bool{false, true} {
		p := newPod(ns, "")
		if start {
			standalone(p)
		}
		cluster.MustCreate(t, p)
		err := cluster.TryUpdate(p, func() {
			if start {
				delete(p.Annotations, kueue.StandaloneAnnotation)
			} else {
				standalone(p)
			}
		})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "immutable") {
			t.Errorf("changing standalone on a live Pod (had it: %v) gave %v, want Invalid ... immutable", start, err)
		}
	}
}

func TestPodSuspendingParentAloneGatesThePod(t *testing.T) {
	ns, _ := newQueue(t, "3")
	driver := newPod(ns, "")
	cluster.MustCreate(t, driver)
	p := newPod(ns, "lq")
	p.Annotations = map[string]string{kueue.PodSuspendingParentAnno: "deployment"}
	ownedBy(p, driver, "Pod", "v1")
	cluster.MustCreate(t, p)
	if !queued(p) {
		t.Fatalf("pod-suspending-parent did not gate the Pod: %v", p.Spec.SchedulingGates)
	}
	waitPod(t, p, "to be admitted", ungated)
}

func TestPodWithoutQueueIsLeftAlone(t *testing.T) {
	ns, _ := newQueue(t, "3")
	p := newPod(ns, "")
	cluster.MustCreate(t, p)
	if isGated(p) || len(p.Finalizers) > 0 {
		t.Fatalf("an unqueued Pod was changed: gates %v, finalizers %v", p.Spec.SchedulingGates, p.Finalizers)
	}
	noWorkloadFor(t, p)
}
