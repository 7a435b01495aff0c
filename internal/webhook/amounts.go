package webhook

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/sluicehq/sluice/internal/quota"
)

// validateAmount refuses a quota or request that sluice can't count exactly:
// negative, or beyond quota.MaxQuantity.
func validateAmount(q resource.Quantity, path *field.Path) field.ErrorList {
	if why := quota.CheckQuantity(q); why != "" {
		return field.ErrorList{field.Invalid(path, q.String(), why)}
	}
	return nil
}

// ValidatePodSpecAmounts refuses requests, limits and overhead of a pod spec
// that sluice can't count exactly. Queued objects (a Workload's pod sets, a
// queued Job's or Pod's template) are checked with it: a request beyond
// int64 would otherwise be charged as the largest amount, and refusing it
// tells the user which field is wrong instead of leaving the job pending.
func ValidatePodSpecAmounts(spec *corev1.PodSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	check := func(containers []corev1.Container, p *field.Path) {
		for i := range containers {
			res := &containers[i].Resources
			cp := p.Index(i).Child("resources")
			for name, q := range res.Requests {
				errs = append(errs, validateAmount(q, cp.Child("requests").Key(string(name)))...)
			}
			for name, q := range res.Limits {
				errs = append(errs, validateAmount(q, cp.Child("limits").Key(string(name)))...)
			}
		}
	}
	check(spec.InitContainers, path.Child("initContainers"))
	check(spec.Containers, path.Child("containers"))
	for name, q := range spec.Overhead {
		errs = append(errs, validateAmount(q, path.Child("overhead").Key(string(name)))...)
	}
	return errs
}
