package integration

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// PodSetInfo is what admission adds to one pod set's template: the chosen
// flavors' node labels and tolerations, and the labels, annotations, node
// selector and tolerations of admission checks' podSetUpdates. The same
// type records a template's original values, to restore them on eviction.
type PodSetInfo struct {
	Name         kueue.PodSetReference `json:"name"`
	Count        int32                 `json:"count"`
	Labels       map[string]string     `json:"labels,omitempty"`
	Annotations  map[string]string     `json:"annotations,omitempty"`
	NodeSelector map[string]string     `json:"nodeSelector,omitempty"`
	Tolerations  []corev1.Toleration   `json:"tolerations,omitempty"`
}

// ErrConflictingUpdates: admission checks' podSetUpdates (or one and the
// assigned flavor) set the same key to different values. The job can't
// start with both, and picking one would run it where a check did not
// agree to; its Workload finishes as FailedToStart.
var ErrConflictingUpdates = errors.New("conflicting podSetUpdates")

// FromAdmission builds each admitted pod set's info from the flavors it was
// assigned and the admission checks' updates. A flavor missing from flavors
// is an error: admission must not start a job it can't place.
func FromAdmission(adm *kueue.Admission, flavors map[kueue.ResourceFlavorReference]*kueue.ResourceFlavor, updates []kueue.PodSetUpdate) ([]PodSetInfo, error) {
	var infos []PodSetInfo
	for _, psa := range adm.PodSetAssignments {
		info := PodSetInfo{Name: psa.Name, NodeSelector: map[string]string{}}
		if psa.Count != nil {
			info.Count = *psa.Count
		}
		// One flavor may serve several resources: inject it once.
		seen := map[kueue.ResourceFlavorReference]bool{}
		for _, name := range slices.Sorted(maps.Keys(psa.Flavors)) {
			ref := psa.Flavors[name]
			if seen[ref] {
				continue
			}
			seen[ref] = true
			rf, ok := flavors[ref]
			if !ok {
				return nil, fmt.Errorf("podSet %s: ResourceFlavor %s not found", psa.Name, ref)
			}
			if err := addSelector(info.NodeSelector, rf.Spec.NodeLabels, "ResourceFlavor "+string(ref)); err != nil {
				return nil, fmt.Errorf("podSet %s: %w", psa.Name, err)
			}
			info.Tolerations = appendMissing(info.Tolerations, rf.Spec.Tolerations)
		}
		for _, u := range updates {
			if u.Name != psa.Name {
				continue
			}
			if info.Labels == nil {
				info.Labels = map[string]string{}
			}
			if info.Annotations == nil {
				info.Annotations = map[string]string{}
			}
			for _, add := range []struct {
				dst, src map[string]string
				what     string
			}{{info.Labels, u.Labels, "label"}, {info.Annotations, u.Annotations, "annotation"}, {info.NodeSelector, u.NodeSelector, "nodeSelector"}} {
				if err := addSelector(add.dst, add.src, "an admission check's podSetUpdate "+add.what); err != nil {
					return nil, fmt.Errorf("%w: podSet %s: %w", ErrConflictingUpdates, psa.Name, err)
				}
			}
			info.Tolerations = appendMissing(info.Tolerations, u.Tolerations)
		}
		infos = append(infos, info)
	}
	return infos, nil
}

// Original captures what Inject may change in a template, to restore later.
func Original(name kueue.PodSetReference, count int32, tmpl *corev1.PodTemplateSpec) PodSetInfo {
	return PodSetInfo{
		Name: name, Count: count,
		Labels:       maps.Clone(tmpl.Labels),
		Annotations:  maps.Clone(tmpl.Annotations),
		NodeSelector: maps.Clone(tmpl.Spec.NodeSelector),
		Tolerations:  slices.Clone(tmpl.Spec.Tolerations),
	}
}

// Inject adds info to a template. A node selector key the template already
// sets to another value is a conflict: the job could never run where the
// quota was reserved.
func Inject(tmpl *corev1.PodTemplateSpec, info PodSetInfo) error {
	if tmpl.Spec.NodeSelector == nil && len(info.NodeSelector) > 0 {
		tmpl.Spec.NodeSelector = map[string]string{}
	}
	if err := addSelector(tmpl.Spec.NodeSelector, info.NodeSelector, "admission"); err != nil {
		return fmt.Errorf("podSet %s: the pod template's nodeSelector: %w", info.Name, err)
	}
	tmpl.Labels = mergeInto(tmpl.Labels, info.Labels)
	tmpl.Annotations = mergeInto(tmpl.Annotations, info.Annotations)
	tmpl.Spec.Tolerations = appendMissing(tmpl.Spec.Tolerations, info.Tolerations)
	return nil
}

// Restore puts a template back as Original captured it, and tells whether
// anything changed.
func Restore(tmpl *corev1.PodTemplateSpec, original PodSetInfo) bool {
	before := tmpl.DeepCopy()
	tmpl.Labels = maps.Clone(original.Labels)
	tmpl.Annotations = maps.Clone(original.Annotations)
	tmpl.Spec.NodeSelector = maps.Clone(original.NodeSelector)
	tmpl.Spec.Tolerations = slices.Clone(original.Tolerations)
	return !equality.Semantic.DeepEqual(before, tmpl)
}

// EncodeOriginals and DecodeOriginals keep the original pod-set infos in an
// annotation of the job while it runs with injected ones.
func EncodeOriginals(infos []PodSetInfo) (string, error) {
	data, err := json.Marshal(infos)
	if err != nil {
		return "", fmt.Errorf("encoding the original pod-set info: %w", err)
	}
	return string(data), nil
}

// DecodeOriginals reads what EncodeOriginals wrote.
func DecodeOriginals(value string) ([]PodSetInfo, error) {
	var infos []PodSetInfo
	if err := json.Unmarshal([]byte(value), &infos); err != nil {
		return nil, fmt.Errorf("decoding the original pod-set info: %w", err)
	}
	return infos, nil
}

func addSelector(dst, src map[string]string, from string) error {
	for _, k := range slices.Sorted(maps.Keys(src)) {
		if have, ok := dst[k]; ok && have != src[k] {
			return fmt.Errorf("%s needs %s=%s, but it is already %s=%s", from, k, src[k], k, have)
		}
		dst[k] = src[k]
	}
	return nil
}

func mergeInto(dst, src map[string]string) map[string]string {
	if len(src) == 0 {
		return dst
	}
	if dst == nil {
		dst = map[string]string{}
	}
	maps.Copy(dst, src)
	return dst
}

func appendMissing(dst, src []corev1.Toleration) []corev1.Toleration {
	for _, t := range src {
		if !slices.ContainsFunc(dst, func(have corev1.Toleration) bool { return equality.Semantic.DeepEqual(have, t) }) {
			dst = append(dst, t)
		}
	}
	return dst
}
