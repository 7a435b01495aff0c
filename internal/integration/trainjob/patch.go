package trainjob

import (
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
)

// sluicePatchManager names sluice's entry in a TrainJob's
// spec.runtimePatches: Kueue's name, so that tools reading it and the
// trainer's documentation about it hold for sluice too.
const sluicePatchManager = "kueue.x-k8s.io/manager"

// The part of the trainer's RuntimePatch that sluice writes: per
// replicated Job, its pod template's labels, annotations, node selector
// and tolerations. The trainer merges it into the runtime's JobSet
// template (strategic merge: the patch's node selector keys win) when it
// builds the JobSet.
type (
	runtimePatch struct {
		Manager             string           `json:"manager"`
		TrainingRuntimeSpec runtimeSpecPatch `json:"trainingRuntimeSpec"`
	}
	runtimeSpecPatch struct {
		Template jobSetTemplatePatch `json:"template"`
	}
	jobSetTemplatePatch struct {
		Spec jobSetSpecPatch `json:"spec"`
	}
	jobSetSpecPatch struct {
		ReplicatedJobs []replicatedJobPatch `json:"replicatedJobs"`
	}
	replicatedJobPatch struct {
		Name     string           `json:"name"`
		Template jobTemplatePatch `json:"template"`
	}
	jobTemplatePatch struct {
		Spec jobSpecPatch `json:"spec"`
	}
	jobSpecPatch struct {
		Template podTemplatePatch `json:"template"`
	}
	podTemplatePatch struct {
		Metadata podMetadataPatch `json:"metadata"`
		Spec     podSpecPatch     `json:"spec"`
	}
	podMetadataPatch struct {
		Labels      map[string]string `json:"labels,omitempty"`
		Annotations map[string]string `json:"annotations,omitempty"`
	}
	podSpecPatch struct {
		NodeSelector map[string]string   `json:"nodeSelector,omitempty"`
		Tolerations  []corev1.Toleration `json:"tolerations,omitempty"`
	}
)

// admittedAnnotation is on every pod template sluice's patch reaches while
// the TrainJob runs on an admission. A JobSet whose pod templates carry it
// while the TrainJob has no admission injected is one the trainer has not
// rebuilt since: it still says where the last admission put it.
const admittedAnnotation = "sluice.dev/admitted"

// runtimePatches are the TrainJob's spec.runtimePatches.
func runtimePatches(u *unstructured.Unstructured) []any {
	patches, _, _ := unstructured.NestedSlice(u.Object, "spec", "runtimePatches")
	return patches
}

// sluicePatch is sluice's entry in spec.runtimePatches and its index;
// false when there is none (or it does not decode).
func sluicePatch(u *unstructured.Unstructured) (runtimePatch, int, bool) {
	for i, p := range runtimePatches(u) {
		m, ok := p.(map[string]any)
		if !ok || m["manager"] != sluicePatchManager {
			continue
		}
		var patch runtimePatch
		if runtime.DefaultUnstructuredConverter.FromUnstructured(m, &patch) != nil {
			return runtimePatch{}, i, false
		}
		return patch, i, true
	}
	return runtimePatch{}, -1, false
}

// hasAdmission tells whether sluice's patch injects an admission.
func hasAdmission(u *unstructured.Unstructured) bool {
	patch, _, ok := sluicePatch(u)
	if !ok {
		return false
	}
	for _, rj := range patch.TrainingRuntimeSpec.Template.Spec.ReplicatedJobs {
		if rj.Template.Spec.Template.Metadata.Annotations[admittedAnnotation] == "true" {
			return true
		}
	}
	return false
}

// setSluicePatch puts admission's infos into sluice's runtime patch, in
// place of one there was.
func setSluicePatch(u *unstructured.Unstructured, infos []integration.PodSetInfo) error {
	patch := runtimePatch{Manager: sluicePatchManager}
	for _, info := range infos {
		annotations := maps.Clone(info.Annotations)
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[admittedAnnotation] = "true"
		patch.TrainingRuntimeSpec.Template.Spec.ReplicatedJobs = append(patch.TrainingRuntimeSpec.Template.Spec.ReplicatedJobs, replicatedJobPatch{
			Name: string(info.Name),
			Template: jobTemplatePatch{Spec: jobSpecPatch{Template: podTemplatePatch{
				Metadata: podMetadataPatch{Labels: info.Labels, Annotations: annotations},
				Spec:     podSpecPatch{NodeSelector: info.NodeSelector, Tolerations: info.Tolerations},
			}}},
		})
	}
	return putSluicePatch(u, patch)
}

// restSluicePatch takes admission out of sluice's runtime patch, and tells
// whether there was one. What stays is each pod set's podset label: the
// trainer rebuilds the JobSet by server-side apply, and an apply that
// empties the pod template's metadata it owned fields of is refused
// (the merge leaves it null), so the JobSet would keep the last
// admission's flavor.
func restSluicePatch(u *unstructured.Unstructured) bool {
	if !hasAdmission(u) {
		return false
	}
	patch, _, _ := sluicePatch(u)
	rest := runtimePatch{Manager: sluicePatchManager}
	for _, rj := range patch.TrainingRuntimeSpec.Template.Spec.ReplicatedJobs {
		rest.TrainingRuntimeSpec.Template.Spec.ReplicatedJobs = append(rest.TrainingRuntimeSpec.Template.Spec.ReplicatedJobs, replicatedJobPatch{
			Name: rj.Name,
			Template: jobTemplatePatch{Spec: jobSpecPatch{Template: podTemplatePatch{
				Metadata: podMetadataPatch{Labels: map[string]string{kueue.PodSetLabel: rj.Name}},
			}}},
		})
	}
	// Encoding what decoded a moment ago can't fail.
	_ = putSluicePatch(u, rest)
	return true
}

// putSluicePatch writes patch as sluice's entry, in place of one there was.
func putSluicePatch(u *unstructured.Unstructured, patch runtimePatch) error {
	entry, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&patch)
	if err != nil {
		return fmt.Errorf("encoding sluice's runtime patch: %w", err)
	}
	patches := runtimePatches(u)
	if _, i, _ := sluicePatch(u); i >= 0 {
		patches[i] = entry
	} else {
		patches = append(patches, entry)
	}
	return unstructured.SetNestedSlice(u.Object, patches, "spec", "runtimePatches")
}
