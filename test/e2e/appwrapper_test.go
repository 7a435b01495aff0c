package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	awv1beta2 "github.com/project-codeflare/appwrapper/api/v1beta2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// The AppWrapper controller (CodeFlare's, v1.2, --with appwrapper) makes
// an unsuspended AppWrapper's components and reports it succeeded when
// they are done.

// queuedAppWrapper is an AppWrapper in LocalQueue lq wrapping a Job of two
// 1-CPU pods running for runFor.
func queuedAppWrapper(t *testing.T, ns, name, runFor string) *awv1beta2.AppWrapper {
	t.Helper()
	job := &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}, ObjectMeta: metav1.ObjectMeta{Name: name + "-workers"},
		Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](2), Completions: ptr.To[int32](2), Template: oneCPUTemplate(runFor)}}
	data, err := json.Marshal(job)
	if err != nil {
		t.Fatal(err)
	}
	return &awv1beta2.AppWrapper{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{kueue.QueueNameLabel: "lq"}},
		Spec: awv1beta2.AppWrapperSpec{Components: []awv1beta2.AppWrapperComponent{{Template: runtime.RawExtension{Raw: data}}}}}
}

func appWrapperSucceeded(ctx context.Context, c client.Client, aw *awv1beta2.AppWrapper) (bool, error) {
	if err := c.Get(ctx, client.ObjectKeyFromObject(aw), aw); err != nil {
		return false, err
	}
	if aw.Status.Phase == awv1beta2.AppWrapperFailed {
		return false, fmt.Errorf("AppWrapper %s failed", aw.Name)
	}
	return aw.Status.Phase == awv1beta2.AppWrapperSucceeded, nil
}

// Two AppWrappers of two 1-CPU pods in a 3-CPU queue, run by the
// AppWrapper controller: the first's Job runs; the second waits suspended,
// its Job not made. When the first succeeds the second runs and succeeds.
func TestAppWrappersWaitRunAndSucceedWithTheAppWrapperController(t *testing.T) {
	c := sharedClient(t)
	const ns = "e2e-appwrapper"
	e2eQueue(t, c, ns, "on-demand", "3")
	first, second := queuedAppWrapper(t, ns, "first", "8s"), queuedAppWrapper(t, ns, "second", "1s")
	firstRunsSecondWaits(t, c, ns, first, second, "the first AppWrapper's two pods to run", func(ctx context.Context) (bool, error) {
		running, _, err := podCounts(ctx, c, ns, map[string]string{batchv1.JobNameLabel: "first-workers"})
		return running == 2, err
	})
	if !second.Spec.Suspend {
		t.Errorf("the waiting AppWrapper is not suspended")
	}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "second-workers"}, &batchv1.Job{}); err == nil {
		t.Errorf("the waiting AppWrapper's Job was made")
	}
	for _, aw := range []*awv1beta2.AppWrapper{first, second} {
		eventually(t, "AppWrapper "+aw.Name+" to succeed", func(ctx context.Context) (bool, error) { return appWrapperSucceeded(ctx, c, aw) })
		eventually(t, "the Workload of AppWrapper "+aw.Name+" to finish", func(ctx context.Context) (bool, error) {
			wl, err := workloadOwnedBy(ctx, c, ns, aw.UID)
			return wl != nil && meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished), err
		})
	}
	pods := &corev1.PodList{}
	if err := c.List(t.Context(), pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodSucceeded {
			t.Errorf("pod %s is %s after both AppWrappers succeeded", p.Name, p.Status.Phase)
		}
	}
	eventually(t, "the queue to be empty", func(ctx context.Context) (bool, error) { return queueIsEmpty(ctx, c, ns) })
}
