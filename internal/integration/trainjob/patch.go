package trainjob

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

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

// runtimePatches are the TrainJob's spec.runtimePatches.
func runtimePatches(u *unstructured.Unstructured) []any {
	patches, _, _ := unstructured.NestedSlice(u.Object, "spec", "runtimePatches")
	return patches
}

// sluicePatchIndex is the index of sluice's entry in spec.runtimePatches.
func sluicePatchIndex(u *unstructured.Unstructured) (int, bool) {
	for i, p := range runtimePatches(u) {
		if m, ok := p.(map[string]any); ok && m["manager"] == sluicePatchManager {
			return i, true
		}
	}
	return -1, false
}

// setSluicePatch puts admission's infos into sluice's runtime patch, in
// place of one there was.
func setSluicePatch(u *unstructured.Unstructured, infos []integration.PodSetInfo) error {
	patch := runtimePatch{Manager: sluicePatchManager}
	for _, info := range infos {
		patch.TrainingRuntimeSpec.Template.Spec.ReplicatedJobs = append(patch.TrainingRuntimeSpec.Template.Spec.ReplicatedJobs, replicatedJobPatch{
			Name: string(info.Name),
			Template: jobTemplatePatch{Spec: jobSpecPatch{Template: podTemplatePatch{
				Metadata: podMetadataPatch{Labels: info.Labels, Annotations: info.Annotations},
				Spec:     podSpecPatch{NodeSelector: info.NodeSelector, Tolerations: info.Tolerations},
			}}},
		})
	}
	entry, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&patch)
	if err != nil {
		return fmt.Errorf("encoding sluice's runtime patch: %w", err)
	}
	patches := runtimePatches(u)
	if i, ok := sluicePatchIndex(u); ok {
		patches[i] = entry
	} else {
		patches = append(patches, entry)
	}
	return unstructured.SetNestedSlice(u.Object, patches, "spec", "runtimePatches")
}

// removeSluicePatch takes sluice's runtime patch off, and tells whether
// there was one.
func removeSluicePatch(u *unstructured.Unstructured) bool {
	i, ok := sluicePatchIndex(u)
	if !ok {
		return false
	}
	patches := runtimePatches(u)
	patches = append(patches[:i], patches[i+1:]...)
	if len(patches) == 0 {
		unstructured.RemoveNestedField(u.Object, "spec", "runtimePatches")
		return true
	}
	// Setting a slice that came out of the object can't fail.
	_ = unstructured.SetNestedSlice(u.Object, patches, "spec", "runtimePatches")
	return true
}
