package appwrapper

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	awv1beta2 "github.com/project-codeflare/appwrapper/api/v1beta2"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
	"github.com/sluicehq/sluice/internal/integration/appwrapper"
	"github.com/sluicehq/sluice/test/integration/framework"
)

func podSpec(cpu string) corev1.PodSpec {
	return corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: "busybox",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}
}

// wrappedJob is the Job component: parallelism pods of 1 CPU.
func wrappedJob(name string, parallelism int32) *batchv1.Job {
	return &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}, ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{Parallelism: ptr.To(parallelism), Completions: ptr.To(parallelism), Template: corev1.PodTemplateSpec{Spec: podSpec("1")}}}
}

// newAppWrapper is an AppWrapper in LocalQueue lq wrapping a Job of two
// 1-CPU pods.
func newAppWrapper(t *testing.T, ns string) *awv1beta2.AppWrapper {
	t.Helper()
	data, err := json.Marshal(wrappedJob("workers", 2))
	if err != nil {
		t.Fatal(err)
	}
	return &awv1beta2.AppWrapper{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster.Unique("aw"), Labels: map[string]string{kueue.QueueNameLabel: "lq"}},
		Spec: awv1beta2.AppWrapperSpec{Components: []awv1beta2.AppWrapperComponent{{Template: runtime.RawExtension{Raw: data}}}}}
}

func workloadOf(aw *awv1beta2.AppWrapper) *kueue.Workload {
	return &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: aw.Namespace, Name: integration.WorkloadName(appwrapper.Kind.GVK, aw.Name, aw.UID)}}
}

func running(aw *awv1beta2.AppWrapper) error { return framework.Running(&aw.Spec.Suspend) }

// setStatus writes the AppWrapper's status as its controller would.
func setStatus(t *testing.T, aw *awv1beta2.AppWrapper, mutate func(*awv1beta2.AppWrapper)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		current := &awv1beta2.AppWrapper{}
		if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(aw), current); err != nil {
			return err
		}
		mutate(current)
		return cluster.Client.Status().Update(context.Background(), current)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// component is the Job the AppWrapper controller creates of the running
// AppWrapper's component, with the admission its podSetInfos carry.
func component(aw *awv1beta2.AppWrapper) *batchv1.Job {
	j := wrappedJob("workers", 2)
	j.Namespace = aw.Namespace
	j.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(aw, appwrapper.Kind.GVK)}
	j.Labels = map[string]string{awv1beta2.AppWrapperLabel: aw.Name}
	if infos := aw.Spec.Components[0].PodSetInfos; len(infos) > 0 {
		j.Spec.Template.Spec.NodeSelector = infos[0].NodeSelector
	}
	return j
}

func startedAppWrapper(t *testing.T, cpu string) (*awv1beta2.AppWrapper, *kueue.Workload, string) {
	t.Helper()
	ns, flavor := cluster.NewQueue(t, "aw", cpu)
	aw := newAppWrapper(t, ns)
	cluster.MustCreate(t, aw)
	if !aw.Spec.Suspend {
		t.Fatal("the webhook did not create the queued AppWrapper suspended")
	}
	wl := cluster.WaitWorkload(t, workloadOf(aw), "to be admitted", framework.Admitted)
	started := framework.WaitFor(t, cluster.Client, aw, "to run", running)
	return started, wl, flavor
}

func TestAppWrapperIsQueuedStartedAndFinished(t *testing.T) {
	aw, wl, flavor := startedAppWrapper(t, "3")
	if len(wl.Spec.PodSets) != 1 || wl.Spec.PodSets[0].Count != 2 {
		t.Fatalf("pod sets %+v, want the wrapped Job's 2 pods", wl.Spec.PodSets)
	}
	infos := aw.Spec.Components[0].PodSetInfos
	if len(infos) != 1 || infos[0].NodeSelector["pool"] != flavor || infos[0].Labels[kueue.PodSetLabel] != string(wl.Spec.PodSets[0].Name) {
		t.Fatalf("podSetInfos %+v: want the flavor's pool and the podset label for the AppWrapper controller to inject", infos)
	}
	job := component(aw)
	job.Labels[kueue.QueueNameLabel] = "lq"
	cluster.MustCreate(t, job)
	if ptr.Deref(job.Spec.Suspend, false) {
		t.Fatal("the component the AppWrapper controller creates was suspended: the AppWrapper's Workload counts it")
	}
	cluster.NoWorkloadOf(t, job, "lq")
	setStatus(t, aw, func(current *awv1beta2.AppWrapper) { current.Status.Phase = awv1beta2.AppWrapperSucceeded })
	cluster.WaitWorkload(t, wl, "to finish", framework.ConditionIs(kueue.WorkloadFinished, metav1.ConditionTrue, integration.FinishedReasonSucceeded))
}

func TestAppWrapperWaitsUntilItFits(t *testing.T) {
	ns, _ := cluster.NewQueue(t, "aw", "1")
	aw := newAppWrapper(t, ns)
	cluster.MustCreate(t, aw)
	wl := cluster.WaitWorkload(t, workloadOf(aw), "to exist", func(*kueue.Workload) error { return nil })
	cluster.WaitPending(t, wl, kueue.ReasonExceedsMaxQuota)
}

// An evicted AppWrapper is suspended; once its controller reports its
// resources gone, its podSetInfos are cleared and the quota given back.
func TestEvictedAppWrapperIsSuspendedAndRestored(t *testing.T) {
	aw, wl, _ := startedAppWrapper(t, "3")
	setStatus(t, aw, func(current *awv1beta2.AppWrapper) {
		current.Status.Phase = awv1beta2.AppWrapperRunning
		meta.SetStatusCondition(&current.Status.Conditions, metav1.Condition{Type: string(awv1beta2.ResourcesDeployed), Status: metav1.ConditionTrue, Reason: "Deployed"})
	})
	framework.Update(t, cluster.Client, wl, func() { wl.Spec.Active = ptr.To(false) })
	framework.WaitFor(t, cluster.Client, aw, "to be suspended", func(aw *awv1beta2.AppWrapper) error {
		if !aw.Spec.Suspend {
			return fmt.Errorf("running")
		}
		return nil
	})
	if current := cluster.WaitWorkload(t, wl, "to be evicted", framework.ConditionIs(kueue.WorkloadEvicted, metav1.ConditionTrue, "")); current.Status.Admission == nil {
		t.Fatal("the quota was given back while the AppWrapper's resources are deployed")
	}
	setStatus(t, aw, func(current *awv1beta2.AppWrapper) {
		current.Status.Phase = awv1beta2.AppWrapperSuspended
		meta.SetStatusCondition(&current.Status.Conditions, metav1.Condition{Type: string(awv1beta2.ResourcesDeployed), Status: metav1.ConditionFalse, Reason: "Suspended"})
	})
	cluster.WaitWorkload(t, wl, "to give its quota back", func(wl *kueue.Workload) error {
		if wl.Status.Admission != nil {
			return fmt.Errorf("still admitted")
		}
		return nil
	})
	framework.WaitFor(t, cluster.Client, aw, "to have its podSetInfos cleared", func(aw *awv1beta2.AppWrapper) error {
		if aw.Spec.Components[0].PodSetInfos != nil {
			return fmt.Errorf("podSetInfos %+v", aw.Spec.Components[0].PodSetInfos)
		}
		return nil
	})
}

// Only the components the AppWrapper controller makes are the AppWrapper's:
// an object of another name, or one larger than its component, is queued
// as if it had no owner; a component grown after it was made comes back
// suspended from the growing update, and is queued on its own.
func TestOnlyItsComponentsAreLeftToAnAppWrapper(t *testing.T) {
	aw, _, _ := startedAppWrapper(t, "8")
	other := component(aw)
	other.Name = cluster.Unique("extra")
	larger := component(aw)
	larger.Spec.Parallelism, larger.Spec.Completions = ptr.To(int32(4)), ptr.To(int32(4))
	for what, job := range map[string]*batchv1.Job{"a Job of another name": other, "a larger Job": larger} {
		if what == "a larger Job" {
			larger.Name = "workers"
		}
		job.Labels[kueue.QueueNameLabel] = "lq"
		cluster.MustCreate(t, job)
		if !ptr.Deref(job.Spec.Suspend, false) {
			t.Errorf("%s naming the AppWrapper as its controller ran as the AppWrapper's, outside its queue", what)
		}
		if err := cluster.Client.Delete(context.Background(), job, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
			t.Fatal(err)
		}
	}
	framework.Eventually(t, "the larger Job to be gone", func(ctx context.Context) (bool, error) {
		err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(larger), &batchv1.Job{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	made := component(aw)
	made.Labels[kueue.QueueNameLabel] = "lq"
	made.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	cluster.MustCreate(t, made)
	if ptr.Deref(made.Spec.Suspend, false) {
		t.Fatal("the AppWrapper's component was suspended")
	}
	cluster.ExpectGrownChildQueued(t, made, 5)
}

// A running AppWrapper whose component asks for more is suspended in the
// update, and queued again with its new shape.
func TestGrownRunningAppWrapperStopsAndRequeues(t *testing.T) {
	aw, _, _ := startedAppWrapper(t, "3")
	data, err := json.Marshal(wrappedJob("workers", 3))
	if err != nil {
		t.Fatal(err)
	}
	framework.Update(t, cluster.Client, aw, func() { aw.Spec.Components[0].Template = runtime.RawExtension{Raw: data} })
	if !aw.Spec.Suspend {
		t.Fatal("a running AppWrapper given more pods was not suspended in the same update")
	}
}

func TestAppWrapperWebhookRules(t *testing.T) {
	ns, _ := cluster.NewQueue(t, "aw", "3")
	for name, tc := range map[string]struct {
		mutate func(*awv1beta2.AppWrapper)
		want   string
	}{
		"a declared count the Job doesn't have": {func(aw *awv1beta2.AppWrapper) {
			aw.Spec.Components[0].DeclaredPodSets = []awv1beta2.AppWrapperPodSet{{Path: "template.spec.template", Replicas: ptr.To(int32(1))}}
		}, "spec.components[0].podSets"},
		"a path to no pod template": {func(aw *awv1beta2.AppWrapper) {
			aw.Spec.Components[0].DeclaredPodSets = []awv1beta2.AppWrapperPodSet{{Path: "template.spec.nothing", Replicas: ptr.To(int32(2))}}
		}, "spec.components[0].podSets[0].path"},
		"more than int64 can count": {func(aw *awv1beta2.AppWrapper) {
			j := wrappedJob("workers", 2)
			j.Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceMemory] = resource.MustParse("9Ei")
			data, _ := json.Marshal(j)
			aw.Spec.Components[0].Template = runtime.RawExtension{Raw: data}
		}, "spec.components[0].template"},
	} {
		t.Run(name, func(t *testing.T) {
			aw := newAppWrapper(t, ns)
			tc.mutate(aw)
			err := cluster.Client.Create(context.Background(), aw)
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("create: %v, want Invalid naming %s", err, tc.want)
			}
		})
	}
}

// The pods of a wrapped Deployment are the AppWrapper's, through the
// Deployment's ReplicaSet: its Workload counts them, they are not queued
// again.
func TestPodsOfAWrappedDeploymentAreTheAppWrappers(t *testing.T) {
	ns, _ := cluster.NewQueue(t, "aw", "3")
	serving := podSpec("1")
	serving.RestartPolicy = corev1.RestartPolicyAlways
	deployment := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: metav1.ObjectMeta{Name: "serve"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(2)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "serve"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "serve", kueue.QueueNameLabel: "lq"}}, Spec: serving}}}
	data, err := json.Marshal(deployment)
	if err != nil {
		t.Fatal(err)
	}
	aw := newAppWrapper(t, ns)
	aw.Spec.Components[0].Template = runtime.RawExtension{Raw: data}
	cluster.MustCreate(t, aw)
	cluster.WaitWorkload(t, workloadOf(aw), "to be admitted", framework.Admitted)
	started := framework.WaitFor(t, cluster.Client, aw, "to run", running)
	// What the AppWrapper controller, then the Deployment's, make.
	deployment.Namespace = ns
	deployment.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(started, appwrapper.Kind.GVK)}
	cluster.MustCreate(t, deployment)
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "serve-1",
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(deployment, appsv1.SchemeGroupVersion.WithKind("Deployment"))}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(int32(2)), Selector: deployment.Spec.Selector, Template: deployment.Spec.Template}}
	cluster.MustCreate(t, rs)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "serve-1-abcde", Labels: deployment.Spec.Template.Labels,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}},
		Spec: deployment.Spec.Template.Spec}
	cluster.MustCreate(t, pod)
	if pod.Labels[kueue.ManagedLabel] == "true" || len(pod.Spec.SchedulingGates) > 0 {
		t.Errorf("a Pod of a wrapped Deployment was queued again: labels %v, gates %v", pod.Labels, pod.Spec.SchedulingGates)
	}
}

// The AppWrapper example is accepted by the API server (the schema of the
// project's own CustomResourceDefinition) and by sluice's webhook (a dry
// run).
func TestAppWrapperExampleIsValid(t *testing.T) {
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "examples", "appwrapper.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	aw := &awv1beta2.AppWrapper{}
	if err := yaml.UnmarshalStrict(data, aw); err != nil {
		t.Fatalf("examples/appwrapper.yaml: %v", err)
	}
	cluster.MustCreate(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: aw.Namespace}})
	if err := cluster.Client.Create(context.Background(), aw, client.DryRunAll, client.FieldValidation("Strict")); err != nil {
		t.Fatalf("examples/appwrapper.yaml: %v", err)
	}
	if podSets, err := (&appwrapper.AppWrapper{AppWrapper: aw}).PodSets(); err != nil || len(podSets) != 1 || podSets[0].Count != 2 {
		t.Errorf("the example's pod sets %+v (%v), want the Job's 2 pods", podSets, err)
	}
}
