package integration

import (
	"context"
	"fmt"
	"strconv"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/priority"
	"github.com/sluicehq/sluice/internal/workload"
)

// newWorkload builds the Workload of a job: named per the contract, owned by
// the job, with its pod sets, queue, priority, execution limit and the
// labels the configuration copies.
func newWorkload(ctx context.Context, reader client.Reader, kind Kind, job Job, queue string, labelKeysToCopy []string) (*kueue.Workload, error) {
	obj := job.Object()
	podSets, err := job.PodSets()
	if err != nil {
		return nil, err
	}
	wl := &kueue.Workload{
		ObjectMeta: metav1.ObjectMeta{
			Name:      workloadName(kind, job),
			Namespace: obj.GetNamespace(),
			Labels:    map[string]string{kueue.JobUIDLabel: string(obj.GetUID())},
			OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(obj, kind.GVK),
			},
			// Deleting the Workload (or the job) must not free its quota
			// while the job's pods still run: sluice lets it go then.
			Finalizers: []string{kueue.ResourceInUseFinalizerName},
		},
		Spec: kueue.WorkloadSpec{PodSets: podSets, QueueName: kueue.LocalQueueName(queue)},
	}
	if g, ok := job.(Group); ok {
		// No owner: a group's members come and go (replacements, scaling),
		// and the garbage collector would delete the Workload of an
		// admitted group the moment its first members were gone. The
		// Workload goes when the group has no member left.
		wl.Labels = g.WorkloadLabels()
		wl.OwnerReferences = nil
	}
	if obj.GetAnnotations()[kueue.StandaloneAnnotation] == "true" {
		wl.Labels[kueue.StandaloneAnnotation] = "true"
	}
	CopyLabels(wl.Labels, obj.GetLabels(), labelKeysToCopy)
	if err := setPriority(ctx, reader, wl, obj); err != nil {
		return nil, err
	}
	if v, ok := obj.GetLabels()[kueue.MaxExecTimeSecondsLabel]; ok {
		seconds, err := strconv.ParseInt(v, 10, 32)
		if err != nil || seconds <= 0 {
			return nil, fmt.Errorf("label %s=%q: must be a positive integer", kueue.MaxExecTimeSecondsLabel, v)
		}
		limit := int32(seconds)
		wl.Spec.MaximumExecutionTimeSeconds = &limit
	}
	return wl, nil
}

// setPriority resolves the job's kueue.x-k8s.io/priority-class label (a
// WorkloadPriorityClass), or else its pods' priorityClassName.
func setPriority(ctx context.Context, reader client.Reader, wl *kueue.Workload, obj client.Object) error {
	var ref *kueue.PriorityClassRef
	if name := obj.GetLabels()[kueue.PriorityClassLabel]; name != "" {
		ref = &kueue.PriorityClassRef{Group: kueue.WorkloadPriorityClassGroup, Kind: kueue.WorkloadPriorityClassKind, Name: name}
	} else {
		for _, ps := range wl.Spec.PodSets {
			if name := ps.Template.Spec.PriorityClassName; name != "" {
				ref = &kueue.PriorityClassRef{Group: kueue.PodPriorityClassGroup, Kind: kueue.PodPriorityClassKind, Name: name}
				break
			}
		}
	}
	if ref == nil {
		return nil
	}
	value, err := priority.ClassValue(ctx, reader, ref)
	if err != nil {
		return err
	}
	wl.Spec.PriorityClassRef = ref
	wl.Spec.Priority = &value
	return nil
}

// samePodSets tells whether a Workload's pod sets still describe the job's:
// the same names and counts, the same requests per pod, and the same
// scheduling constraints (what admission looks at). Templates are not
// compared whole, so that API defaulting can't make them differ forever.
func samePodSets(have, want []kueue.PodSet) bool {
	if len(have) != len(want) {
		return false
	}
	for i := range have {
		a, b := &have[i], &want[i]
		if a.Name != b.Name || a.Count != b.Count || !apiequality.Semantic.DeepEqual(a.MinCount, b.MinCount) {
			return false
		}
		sa, sb := &a.Template.Spec, &b.Template.Spec
		if !apiequality.Semantic.DeepEqual(workload.PodRequests(sa), workload.PodRequests(sb)) ||
			!apiequality.Semantic.DeepEqual(sa.NodeSelector, sb.NodeSelector) ||
			!apiequality.Semantic.DeepEqual(sa.Tolerations, sb.Tolerations) ||
			!apiequality.Semantic.DeepEqual(sa.Affinity, sb.Affinity) {
			return false
		}
	}
	return true
}
