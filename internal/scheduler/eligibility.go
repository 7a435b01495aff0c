package scheduler

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/workload"
)

// ineligibility says why the pods of a podSet can't run on a flavor's nodes,
// or "" when they can: the flavor's labels must not contradict the pods'
// nodeSelector or required node affinity (looking at the flavor's label keys
// only), and every NoSchedule/NoExecute taint of the flavor must be tolerated
// by the pods or by the flavor's own tolerations.
func ineligibility(flavor *kueue.ResourceFlavor, ps *workload.PodSet) string {
	labels := flavor.Spec.NodeLabels
	for key, want := range ps.NodeSelector {
		if have, ok := labels[key]; ok && have != want {
			return fmt.Sprintf("nodeSelector %s=%s doesn't match the flavor's label %s=%s", key, want, key, have)
		}
	}
	if ps.Affinity != nil && len(ps.Affinity.NodeSelectorTerms) > 0 {
		matched := false
		for _, term := range ps.Affinity.NodeSelectorTerms {
			if termMatches(term, labels) {
				matched = true
				break
			}
		}
		if !matched {
			return "the required node affinity excludes the flavor's node labels"
		}
	}
	for i := range flavor.Spec.NodeTaints {
		taint := &flavor.Spec.NodeTaints[i]
		if taint.Effect != corev1.TaintEffectNoSchedule && taint.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		if !tolerated(taint, ps.Tolerations) && !tolerated(taint, flavor.Spec.Tolerations) {
			return fmt.Sprintf("untolerated taint %s", taint.ToString())
		}
	}
	return ""
}

func tolerated(taint *corev1.Taint, tolerations []corev1.Toleration) bool {
	for i := range tolerations {
		if tolerations[i].ToleratesTaint(logr.Discard(), taint, true) {
			return true
		}
	}
	return false
}

// termMatches evaluates a node selector term against the flavor's labels,
// ignoring expressions on keys the flavor doesn't define: those are for the
// node scheduler, not for the flavor choice.
func termMatches(term corev1.NodeSelectorTerm, labels map[string]string) bool {
	for _, expr := range term.MatchExpressions {
		value, defined := labels[expr.Key]
		if !defined {
			continue
		}
		if !requirementHolds(expr, value) {
			return false
		}
	}
	return true
}

func requirementHolds(expr corev1.NodeSelectorRequirement, value string) bool {
	switch expr.Operator {
	case corev1.NodeSelectorOpIn:
		return contains(expr.Values, value)
	case corev1.NodeSelectorOpNotIn:
		return !contains(expr.Values, value)
	case corev1.NodeSelectorOpExists:
		return true
	case corev1.NodeSelectorOpDoesNotExist:
		return false
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if len(expr.Values) != 1 {
			return false
		}
		have, err1 := strconv.ParseInt(value, 10, 64)
		want, err2 := strconv.ParseInt(expr.Values[0], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		if expr.Operator == corev1.NodeSelectorOpGt {
			return have > want
		}
		return have < want
	}
	return false
}

func contains(list []string, s string) bool {
	return slices.Contains(list, s)
}
