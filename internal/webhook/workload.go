package webhook

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// ValidateWorkload checks the rules of a Workload that don't depend on its
// previous state.
func ValidateWorkload(wl *kueue.Workload) field.ErrorList {
	var errs field.ErrorList
	podSets := field.NewPath("spec", "podSets")
	for i, ps := range wl.Spec.PodSets {
		spec := podSets.Index(i).Child("template", "spec")
		errs = append(errs, forbidPodsResource(&ps.Template.Spec, spec)...)
		errs = append(errs, ValidatePodSpecAmounts(&ps.Template.Spec, spec)...)
	}
	if ref := wl.Spec.PriorityClassRef; ref != nil {
		errs = append(errs, validateObjectName(ref.Name, field.NewPath("spec", "priorityClassRef", "name"))...)
	}
	if adm := wl.Status.Admission; adm != nil {
		errs = append(errs, validateAdmission(wl, adm)...)
	}
	errs = append(errs, validateReclaimablePods(wl)...)
	return errs
}

// ValidateWorkloadUpdate checks the transition rules: what is frozen while
// quota is reserved, and that an admission is never rewritten in place.
func ValidateWorkloadUpdate(oldWl, newWl *kueue.Workload) field.ErrorList {
	errs := ValidateWorkload(newWl)
	spec := field.NewPath("spec")
	if quotaReserved(oldWl) {
		if !apiequality.Semantic.DeepEqual(oldWl.Spec.PodSets, newWl.Spec.PodSets) {
			errs = append(errs, field.Forbidden(spec.Child("podSets"), "is immutable while the workload has QuotaReserved=True"))
		}
		if oldWl.Spec.QueueName != newWl.Spec.QueueName {
			errs = append(errs, field.Forbidden(spec.Child("queueName"), "is immutable while the workload has QuotaReserved=True"))
		}
		if priorityClassKind(oldWl) != priorityClassKind(newWl) {
			errs = append(errs, field.Forbidden(spec.Child("priorityClassRef", "kind"), "is immutable while the workload has QuotaReserved=True"))
		}
	}
	if oldWl.Status.Admission != nil && newWl.Status.Admission != nil &&
		!apiequality.Semantic.DeepEqual(oldWl.Status.Admission, newWl.Status.Admission) {
		errs = append(errs, field.Forbidden(field.NewPath("status", "admission"), "is immutable once set; it can only be cleared (on eviction)"))
	}
	if quotaReserved(oldWl) && quotaReserved(newWl) {
		errs = append(errs, validateReclaimableGrowth(oldWl, newWl)...)
	}
	return errs
}

func forbidPodsResource(spec *corev1.PodSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	check := func(containers []corev1.Container, p *field.Path) {
		for i, c := range containers {
			cp := p.Index(i).Child("resources")
			if _, ok := c.Resources.Requests[kueue.ResourcePods]; ok {
				errs = append(errs, field.Forbidden(cp.Child("requests").Key(kueue.ResourcePods), "the resource name pods is reserved: sluice counts pods itself"))
			}
			if _, ok := c.Resources.Limits[kueue.ResourcePods]; ok {
				errs = append(errs, field.Forbidden(cp.Child("limits").Key(kueue.ResourcePods), "the resource name pods is reserved: sluice counts pods itself"))
			}
		}
	}
	check(spec.InitContainers, path.Child("initContainers"))
	check(spec.Containers, path.Child("containers"))
	return errs
}

func validateAdmission(wl *kueue.Workload, adm *kueue.Admission) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("status", "admission")
	errs = append(errs, validateObjectName(string(adm.ClusterQueue), path.Child("clusterQueue"))...)
	names := map[kueue.PodSetReference]int32{}
	for _, ps := range wl.Spec.PodSets {
		names[ps.Name] = ps.Count
	}
	for i, psa := range adm.PodSetAssignments {
		p := path.Child("podSetAssignments").Index(i)
		count, ok := names[psa.Name]
		if !ok {
			errs = append(errs, field.NotFound(p.Child("name"), psa.Name))
			continue
		}
		if psa.Count != nil && *psa.Count > count {
			errs = append(errs, field.Invalid(p.Child("count"), *psa.Count, fmt.Sprintf("must not exceed the podSet's count (%d)", count)))
		}
	}
	return errs
}

func validateReclaimablePods(wl *kueue.Workload) field.ErrorList {
	var errs field.ErrorList
	counts := map[kueue.PodSetReference]int32{}
	for _, ps := range wl.Spec.PodSets {
		counts[ps.Name] = ps.Count
	}
	path := field.NewPath("status", "reclaimablePods")
	for i, rp := range wl.Status.ReclaimablePods {
		count, ok := counts[rp.Name]
		if !ok {
			errs = append(errs, field.NotFound(path.Index(i).Child("name"), rp.Name))
			continue
		}
		if rp.Count > count {
			errs = append(errs, field.Invalid(path.Index(i).Child("count"), rp.Count, fmt.Sprintf("must not exceed the podSet's count (%d)", count)))
		}
	}
	return errs
}

// validateReclaimableGrowth: while quota is reserved the scheduler has already
// released the quota of reclaimable pods, so the counts can only grow.
func validateReclaimableGrowth(oldWl, newWl *kueue.Workload) field.ErrorList {
	var errs field.ErrorList
	newCounts := map[kueue.PodSetReference]int32{}
	for _, rp := range newWl.Status.ReclaimablePods {
		newCounts[rp.Name] = rp.Count
	}
	path := field.NewPath("status", "reclaimablePods")
	for _, rp := range oldWl.Status.ReclaimablePods {
		if n, ok := newCounts[rp.Name]; !ok || n < rp.Count {
			errs = append(errs, field.Forbidden(path.Key(string(rp.Name)),
				fmt.Sprintf("can't decrease from %d to %d while the workload has QuotaReserved=True", rp.Count, n)))
		}
	}
	return errs
}

func quotaReserved(wl *kueue.Workload) bool {
	return meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
}

func priorityClassKind(wl *kueue.Workload) kueue.PriorityClassKind {
	if wl.Spec.PriorityClassRef == nil {
		return ""
	}
	return wl.Spec.PriorityClassRef.Kind
}
