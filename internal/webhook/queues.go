package webhook

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// ValidateClusterQueue checks the webhook rules of a ClusterQueue.
func ValidateClusterQueue(cq *kueue.ClusterQueue) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if cq.Spec.CohortName != "" {
		errs = append(errs, validateObjectName(string(cq.Spec.CohortName), spec.Child("cohortName"))...)
	}
	errs = append(errs, validateResourceGroups(cq.Spec.ResourceGroups, spec.Child("resourceGroups"))...)
	if cq.Spec.CohortName == "" {
		errs = append(errs, forbidLimitsWithout(cq.Spec.ResourceGroups, spec.Child("resourceGroups"), "cohortName")...)
	}
	errs = append(errs, validateLabelSelector(cq.Spec.NamespaceSelector, spec.Child("namespaceSelector"))...)
	errs = append(errs, validateFairSharing(cq.Spec.FairSharing, spec.Child("fairSharing"))...)
	if acs := cq.Spec.AdmissionChecksStrategy; acs != nil {
		for i, ac := range acs.AdmissionChecks {
			errs = append(errs, validateObjectName(ac.Name, spec.Child("admissionChecksStrategy", "admissionChecks").Index(i).Child("name"))...)
		}
	}
	return errs
}

// ValidateCohort checks the webhook rules of a Cohort.
func ValidateCohort(c *kueue.Cohort) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if c.Spec.ParentName != "" {
		errs = append(errs, validateObjectName(string(c.Spec.ParentName), spec.Child("parentName"))...)
	}
	errs = append(errs, validateResourceGroups(c.Spec.ResourceGroups, spec.Child("resourceGroups"))...)
	if c.Spec.ParentName == "" {
		errs = append(errs, forbidLimitsWithout(c.Spec.ResourceGroups, spec.Child("resourceGroups"), "parentName")...)
	}
	errs = append(errs, validateFairSharing(c.Spec.FairSharing, spec.Child("fairSharing"))...)
	return errs
}

// ValidateLocalQueue checks the webhook rules of a LocalQueue.
func ValidateLocalQueue(lq *kueue.LocalQueue) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	errs = append(errs, validateObjectName(string(lq.Spec.ClusterQueue), spec.Child("clusterQueue"))...)
	errs = append(errs, validateFairSharing(lq.Spec.FairSharing, spec.Child("fairSharing"))...)
	return errs
}

// forbidLimitsWithout rejects borrowing and lending limits on a node that has
// no cohort to borrow from or lend to. CEL checks the same; the webhook says
// which limit is at fault.
func forbidLimitsWithout(groups []kueue.ResourceGroup, path *field.Path, parentField string) field.ErrorList {
	var errs field.ErrorList
	for i, rg := range groups {
		for j, fq := range rg.Flavors {
			for k, rq := range fq.Resources {
				p := path.Index(i).Child("flavors").Index(j).Child("resources").Index(k)
				if rq.BorrowingLimit != nil {
					errs = append(errs, field.Forbidden(p.Child("borrowingLimit"), "requires "+parentField))
				}
				if rq.LendingLimit != nil {
					errs = append(errs, field.Forbidden(p.Child("lendingLimit"), "requires "+parentField))
				}
			}
		}
	}
	return errs
}
