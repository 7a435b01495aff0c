// Package statefulset queues a StatefulSet as one pod group: the webhook
// puts the queue, a group name derived from the StatefulSet, the replica
// count, serving and fast admission on its pod template, so that the pod
// integration admits all replicas together and lets a rolling update
// replace Pods within the admission. It must not create Workloads itself.
package statefulset

import (
	"context"
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
)

// +kubebuilder:webhook:path=/mutate-apps-v1-statefulset,mutating=true,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=apps,resources=statefulsets,verbs=create;update,versions=v1,name=mstatefulset.kueue.x-k8s.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-apps-v1-statefulset,mutating=false,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=apps,resources=statefulsets,verbs=create;update,versions=v1,name=vstatefulset.kueue.x-k8s.io,admissionReviewVersions=v1

// Framework is the value of pod-suspending-parent on a StatefulSet's Pods.
const Framework = "statefulset"

// GroupName is the pod group of a StatefulSet's Pods: "statefulset-<name>",
// cut and suffixed with a hash when that is longer than a label value.
func GroupName(name string) string {
	return integration.FitLabelValue("statefulset-"+name, name)
}

// Webhook makes a queued StatefulSet's Pods one pod group. With the
// statefulset framework disabled it lets everything through.
func Webhook(enabled bool) *integration.ThroughPodsWebhook[*appsv1.StatefulSet] {
	return &integration.ThroughPodsWebhook[*appsv1.StatefulSet]{Enabled: enabled, GVK: gvk, Parent: Framework,
		Templates: func(s *appsv1.StatefulSet) []*corev1.PodTemplateSpec {
			return []*corev1.PodTemplateSpec{&s.Spec.Template}
		},
		Shape: asGroup,
		Pods:  func(s *appsv1.StatefulSet) int32 { return s.Status.Replicas }}
}

var gvk = appsv1.SchemeGroupVersion.WithKind("StatefulSet")

// asGroup writes the pod group onto the template.
func asGroup(s *appsv1.StatefulSet, tmpl *corev1.PodTemplateSpec) {
	tmpl.Labels[kueue.PodGroupNameLabel] = GroupName(s.Name)
	// Set once: scaling must not change the template (that would replace
	// every Pod); the group follows spec.replicas.
	if _, ok := tmpl.Annotations[kueue.PodGroupTotalCountAnno]; !ok {
		tmpl.Annotations[kueue.PodGroupTotalCountAnno] = strconv.Itoa(int(ptr.Deref(s.Spec.Replicas, 1)))
	}
	tmpl.Annotations[kueue.PodGroupServingAnno] = "true"
	// Pods of an OrderedReady StatefulSet come one at a time, each after the
	// previous is Ready: the group is admitted for all replicas at once,
	// and its Pods start as they come.
	tmpl.Annotations[kueue.PodGroupFastAdmissionAnno] = "true"
}

// Registration is apps/v1 StatefulSet in the list of kinds: queued through
// its Pods as one group, a known owner for the standalone walk.
var Registration = integration.Registration{
	Framework: configapi.FrameworkStatefulSet,
	GVK:       gvk,
	NewObject: func() client.Object { return &appsv1.StatefulSet{} },
	New: func(deps integration.Deps) integration.Setup {
		return integration.SetupFunc(func(mgr ctrl.Manager) error { return Webhook(deps.Enabled).Register(mgr, &appsv1.StatefulSet{}) })
	},
	ThroughPods: true,
	GroupSize:   GroupSize,
}

// GroupSize is the size of a queued StatefulSet's pod group: its
// spec.replicas, read from the StatefulSet that controls the Pod (with
// the UID the Pod names). A StatefulSet gone: false, and the group's
// total-count annotation says.
func GroupSize(ctx context.Context, reader client.Reader, p *corev1.Pod) (int, bool, error) {
	owner := metav1.GetControllerOf(p)
	if owner == nil || owner.Kind != "StatefulSet" || owner.APIVersion != "apps/v1" || p.Annotations[kueue.PodSuspendingParentAnno] != Framework {
		return 0, false, nil
	}
	s := &appsv1.StatefulSet{}
	if err := reader.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: owner.Name}, s); err != nil {
		if apierrors.IsNotFound(err) {
			return 0, false, nil
		}
		return 0, false, fmt.Errorf("reading StatefulSet %s: %w", owner.Name, err)
	}
	if s.UID != owner.UID {
		return 0, false, nil
	}
	return int(ptr.Deref(s.Spec.Replicas, 1)), true, nil
}
