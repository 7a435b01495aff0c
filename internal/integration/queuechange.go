package integration

import (
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// QueueThroughPods writes a parent's queue and framework onto its pod
// template, so that its Pods are queued (by the pod webhook) on its behalf.
func QueueThroughPods(tmpl *corev1.PodTemplateSpec, queue, framework string) {
	if tmpl.Labels == nil {
		tmpl.Labels = map[string]string{}
	}
	tmpl.Labels[kueue.QueueNameLabel] = queue
	if tmpl.Annotations == nil {
		tmpl.Annotations = map[string]string{}
	}
	tmpl.Annotations[kueue.PodSuspendingParentAnno] = framework
}

// ValidateQueueChange refuses a new queue-name on a parent queued through
// its Pods (a Deployment, a StatefulSet) while it has Pods: they may hold
// quota in the current queue. pods is the parent's status.replicas.
func ValidateQueueChange(kind schema.GroupKind, name string, oldLabels, newLabels map[string]string, pods int32) error {
	if oldLabels[kueue.QueueNameLabel] == newLabels[kueue.QueueNameLabel] || pods == 0 {
		return nil
	}
	path := field.NewPath("metadata", "labels").Key(kueue.QueueNameLabel)
	return apierrors.NewInvalid(kind, name, field.ErrorList{field.Forbidden(path,
		"can change only while the "+kind.Kind+" has no Pods (scale it to 0 first): its Pods may hold quota in the current queue")})
}
