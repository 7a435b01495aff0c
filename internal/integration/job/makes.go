package job

import (
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// selects is the Job's Makes: a Pod is the Job's when the Job's selector
// selects it, which is how the Job controller counts its pods (and deletes
// those beyond its parallelism). A Pod naming the Job as its controller
// without the Job's labels is not the Job's.
func selects(parent, child client.Object) bool {
	j, ok := parent.(*batchv1.Job)
	if !ok {
		return false
	}
	if j.Spec.Selector == nil {
		return true
	}
	sel, err := metav1.LabelSelectorAsSelector(j.Spec.Selector)
	return err == nil && sel.Matches(labels.Set(child.GetLabels()))
}
