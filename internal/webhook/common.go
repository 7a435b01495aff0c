package webhook

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

const (
	maxFlavorsOverGroups   = 256
	maxResourcesOverGroups = 256
)

// validateResourceGroups checks the rules shared by ClusterQueues and
// Cohorts: a resource and a flavor belong to one group only, totals are
// bounded, and quotas are non-negative with lendingLimit within nominalQuota.
func validateResourceGroups(groups []kueue.ResourceGroup, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seenResources := sets.New[corev1.ResourceName]()
	seenFlavors := sets.New[kueue.ResourceFlavorReference]()
	for i, rg := range groups {
		rgPath := path.Index(i)
		for j, name := range rg.CoveredResources {
			p := rgPath.Child("coveredResources").Index(j)
			if seenResources.Has(name) {
				errs = append(errs, because(field.Duplicate(p, name), "a resource can be covered by one resource group only"))
			}
			seenResources.Insert(name)
			errs = append(errs, validateResourceName(string(name), p)...)
		}
		for j, fq := range rg.Flavors {
			fPath := rgPath.Child("flavors").Index(j)
			if seenFlavors.Has(fq.Name) {
				errs = append(errs, because(field.Duplicate(fPath.Child("name"), fq.Name), "a flavor can be in one resource group only"))
			}
			seenFlavors.Insert(fq.Name)
			for k, rq := range fq.Resources {
				errs = append(errs, validateResourceQuota(rq, fPath.Child("resources").Index(k))...)
			}
		}
	}
	if n := seenFlavors.Len(); n > maxFlavorsOverGroups {
		errs = append(errs, field.Invalid(path, n, fmt.Sprintf("must have at most %d flavors over all resource groups", maxFlavorsOverGroups)))
	}
	if n := seenResources.Len(); n > maxResourcesOverGroups {
		errs = append(errs, field.Invalid(path, n, fmt.Sprintf("must have at most %d covered resources over all resource groups", maxResourcesOverGroups)))
	}
	return errs
}

func validateResourceQuota(rq kueue.ResourceQuota, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateAmount(rq.NominalQuota, path.Child("nominalQuota"))...)
	if rq.BorrowingLimit != nil {
		errs = append(errs, validateAmount(*rq.BorrowingLimit, path.Child("borrowingLimit"))...)
	}
	if rq.LendingLimit != nil {
		errs = append(errs, validateAmount(*rq.LendingLimit, path.Child("lendingLimit"))...)
		if rq.LendingLimit.Cmp(rq.NominalQuota) > 0 {
			errs = append(errs, field.Invalid(path.Child("lendingLimit"), rq.LendingLimit.String(),
				fmt.Sprintf("must be less than or equal to nominalQuota (%s)", rq.NominalQuota.String())))
		}
	}
	return errs
}

func validateNonNegative(q resource.Quantity, path *field.Path) field.ErrorList {
	if q.Sign() < 0 {
		return field.ErrorList{field.Invalid(path, q.String(), "must be greater than or equal to 0")}
	}
	return nil
}

func validateResourceName(name string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}

func validateFairSharing(fs *kueue.FairSharing, path *field.Path) field.ErrorList {
	if fs == nil || fs.Weight == nil {
		return nil
	}
	return validateNonNegative(*fs.Weight, path.Child("weight"))
}

func validateObjectName(name string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}

func validateLabelSelector(sel *metav1.LabelSelector, path *field.Path) field.ErrorList {
	if sel == nil {
		return nil
	}
	return metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, path)
}

// because attaches the rule that was broken to an error, so that the message
// says why and not only what.
func because(err *field.Error, rule string) *field.Error {
	err.Detail = rule
	return err
}
