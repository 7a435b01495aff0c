package provisioning

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	autoscaling "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

func requestWith(conditions ...string) *autoscaling.ProvisioningRequest {
	pr := &autoscaling.ProvisioningRequest{ObjectMeta: metav1.ObjectMeta{Name: "pr"}}
	for _, c := range conditions {
		pr.Status.Conditions = append(pr.Status.Conditions, metav1.Condition{Type: c, Status: metav1.ConditionTrue, Reason: c, Message: c + " message"})
	}
	return pr
}

// The autoscaler's conditions map to check states as Kueue maps them: a
// failure or an expired booking before the start retries until the limit,
// then rejects; revoked capacity rejects a running workload.
func TestNextState(t *testing.T) {
	rs := retryStrategy{limit: 2, base: 10 * time.Second, max: time.Minute}
	first := &kueue.AdmissionCheckState{}
	last := &kueue.AdmissionCheckState{RetryCount: ptr.To[int32](2)}
	for _, tc := range []struct {
		name     string
		pr       *autoscaling.ProvisioningRequest
		current  *kueue.AdmissionCheckState
		admitted bool
		want     kueue.CheckState
		wait     int32
	}{
		{"nothing yet", requestWith(), first, false, kueue.CheckStatePending, 0},
		{"accepted", requestWith(autoscaling.Accepted), first, false, kueue.CheckStatePending, 0},
		{"provisioned", requestWith(autoscaling.Accepted, autoscaling.Provisioned), first, false, kueue.CheckStateReady, 0},
		{"failed, first attempt", requestWith(autoscaling.Failed), first, false, kueue.CheckStateRetry, 10},
		{"failed, second attempt", requestWith(autoscaling.Failed), &kueue.AdmissionCheckState{RetryCount: ptr.To[int32](1)}, false, kueue.CheckStateRetry, 20},
		{"failed past the limit", requestWith(autoscaling.Failed), last, false, kueue.CheckStateRejected, 0},
		{"booking expired before the start", requestWith(autoscaling.Provisioned, autoscaling.BookingExpired), first, false, kueue.CheckStateRetry, 10},
		{"booking expired once running", requestWith(autoscaling.Provisioned, autoscaling.BookingExpired), first, true, kueue.CheckStateReady, 0},
		{"capacity revoked once running", requestWith(autoscaling.Provisioned, autoscaling.CapacityRevoked), first, true, kueue.CheckStateRejected, 0},
		{"capacity revoked before the start", requestWith(autoscaling.Provisioned, autoscaling.CapacityRevoked), first, false, kueue.CheckStateReady, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, message, wait := nextState(tc.pr, tc.current, tc.admitted, rs)
			if got != tc.want || ptr.Deref(wait, 0) != tc.wait {
				t.Fatalf("nextState = %s (wait %v, %q), want %s (wait %d)", got, ptr.Deref(wait, 0), message, tc.want, tc.wait)
			}
			if got == kueue.CheckStateRejected && !strings.Contains(message, "message") {
				t.Fatalf("a rejection %q does not carry the autoscaler's message", message)
			}
		})
	}
}

func podSet(name string, count int32, cpu string, selector map[string]string) kueue.PodSet {
	return kueue.PodSet{Name: kueue.PodSetReference(name), Count: count, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{NodeSelector: selector,
		Containers: []corev1.Container{{Name: name, Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}}
}

// Pod sets merge per the policy: identical templates only, or the same
// scheduling requirements (container names may differ); counts add up.
func TestRequestedPodSetsMerge(t *testing.T) {
	wl := &kueue.Workload{Spec: kueue.WorkloadSpec{PodSets: []kueue.PodSet{podSet("a", 1, "1", nil), podSet("b", 2, "1", nil), podSet("c", 3, "2", nil)}},
		Status: kueue.WorkloadStatus{Admission: &kueue.Admission{}}}
	if got := requestedPodSets(wl, wl.Spec.PodSets, nil, nil); len(got) != 3 {
		t.Fatalf("no policy merged into %d", len(got))
	}
	if got := requestedPodSets(wl, wl.Spec.PodSets, nil, ptr.To(kueue.IdenticalPodTemplates)); len(got) != 3 {
		t.Fatalf("templates differing in container names merged under IdenticalPodTemplates: %d", len(got))
	}
	got := requestedPodSets(wl, wl.Spec.PodSets, nil, ptr.To(kueue.IdenticalWorkloadSchedulingRequirements))
	if len(got) != 2 || got[0].count != 3 || len(got[0].members) != 2 || got[1].count != 3 {
		t.Fatalf("merged by scheduling requirements: %+v", got)
	}
	updates := podSetUpdates(&autoscaling.ProvisioningRequest{ObjectMeta: metav1.ObjectMeta{Name: "pr"}}, got, &kueue.ProvisioningRequestConfig{})
	if len(updates) != 3 || updates[1].Name != "b" || updates[1].Annotations[autoscaling.ProvisioningRequestPodAnnotationKey] != "pr" {
		t.Fatalf("every member pod set consumes the request: %+v", updates)
	}
}

func TestNamesStayWithinLimits(t *testing.T) {
	long := strings.Repeat("w", 250)
	a, b := requestName(long, "check", 1), requestName(long, "check", 2)
	if len(a) > maxNameLength || a == b {
		t.Fatalf("names %d chars, distinct %v", len(a), a != b)
	}
	if got := requestName("wl", "check", 3); got != "wl-check-3" {
		t.Fatalf("short name = %q", got)
	}
}
