package webhook

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// ValidateResourceFlavor checks node labels, taints and tolerations as
// Kubernetes would check them on a node and a pod.
func ValidateResourceFlavor(rf *kueue.ResourceFlavor) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	errs = append(errs, validateNodeLabels(rf.Spec.NodeLabels, spec.Child("nodeLabels"))...)
	for i, t := range rf.Spec.NodeTaints {
		errs = append(errs, validateTaint(t, spec.Child("nodeTaints").Index(i))...)
	}
	errs = append(errs, validateTolerations(rf.Spec.Tolerations, spec.Child("tolerations"))...)
	return errs
}

func validateNodeLabels(labels map[string]string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for k, v := range labels {
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(path.Key(k), k, "label key: "+msg))
		}
		for _, msg := range validation.IsValidLabelValue(v) {
			errs = append(errs, field.Invalid(path.Key(k), v, "label value: "+msg))
		}
	}
	return errs
}

func validateTaint(t corev1.Taint, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Key == "" {
		errs = append(errs, field.Required(path.Child("key"), "a taint needs a key"))
	}
	for _, msg := range validation.IsQualifiedName(t.Key) {
		if t.Key != "" {
			errs = append(errs, field.Invalid(path.Child("key"), t.Key, msg))
		}
	}
	for _, msg := range validation.IsValidLabelValue(t.Value) {
		errs = append(errs, field.Invalid(path.Child("value"), t.Value, msg))
	}
	return errs
}

var tolerationEffects = []string{"", string(corev1.TaintEffectNoSchedule), string(corev1.TaintEffectPreferNoSchedule), string(corev1.TaintEffectNoExecute)}

// validateTolerations applies the rules Kubernetes applies to pod tolerations.
func validateTolerations(tolerations []corev1.Toleration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range tolerations {
		p := path.Index(i)
		if t.Key != "" {
			for _, msg := range validation.IsQualifiedName(t.Key) {
				errs = append(errs, field.Invalid(p.Child("key"), t.Key, msg))
			}
		}
		switch t.Operator {
		case corev1.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(p.Child("value"), t.Value, "must be empty when operator is Exists"))
			}
		case corev1.TolerationOpEqual, "":
			if t.Key == "" {
				errs = append(errs, field.Invalid(p.Child("operator"), t.Operator, "must be Exists when key is empty"))
			}
			for _, msg := range validation.IsValidLabelValue(t.Value) {
				errs = append(errs, field.Invalid(p.Child("value"), t.Value, msg))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("operator"), t.Operator, []string{string(corev1.TolerationOpEqual), string(corev1.TolerationOpExists)}))
		}
		if !slices.Contains(tolerationEffects, string(t.Effect)) {
			errs = append(errs, field.NotSupported(p.Child("effect"), t.Effect, tolerationEffects[1:]))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			errs = append(errs, field.Invalid(p.Child("effect"), t.Effect, "must be NoExecute when tolerationSeconds is set"))
		}
	}
	return errs
}
