package integration

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// PodTemplates are a job's pod templates by pod-set name. A nil template
// is a pod set whose pods the kind's controller makes from a template of
// its own (a RayJob's default submitter): nothing is injected into it.
type PodTemplates map[kueue.PodSetReference]*corev1.PodTemplateSpec

// InjectByName injects each admitted pod set's info into its template. The
// admission must name every pod set of the job, and nothing else: a job
// is admitted whole.
func (t PodTemplates) InjectByName(infos []PodSetInfo) error {
	if len(infos) != len(t) {
		return fmt.Errorf("the job has %d pod sets, the admission has %d", len(t), len(infos))
	}
	for _, info := range infos {
		tmpl, ok := t[info.Name]
		if !ok {
			return fmt.Errorf("the admission names pod set %s, which the job does not have", info.Name)
		}
		if tmpl == nil {
			continue
		}
		if err := Inject(tmpl, info); err != nil {
			return fmt.Errorf("pod set %s: %w", info.Name, err)
		}
	}
	return nil
}

// RestoreByName puts each pod set's originals back, and tells whether
// anything changed.
func (t PodTemplates) RestoreByName(originals []PodSetInfo) bool {
	changed := false
	for _, original := range originals {
		if tmpl := t[original.Name]; tmpl != nil {
			changed = Restore(tmpl, original) || changed
		}
	}
	return changed
}

// Originals captures each pod set's template as Inject may change it, with
// its count.
func (t PodTemplates) Originals(podSets []kueue.PodSet) []PodSetInfo {
	infos := make([]PodSetInfo, 0, len(podSets))
	for _, ps := range podSets {
		if tmpl := t[ps.Name]; tmpl != nil {
			infos = append(infos, Original(ps.Name, ps.Count, tmpl))
		}
	}
	return infos
}

// TemplatedJob is a job whose pod sets are its pod templates, by pod-set
// name (a JobSet's replicated Jobs, an MPIJob's replica specs, a Ray
// cluster's groups).
type TemplatedJob interface {
	PodSets() ([]kueue.PodSet, error)
	// Templates are its pod templates by pod-set name, read afresh.
	Templates() PodTemplates
	// LetRun unsuspends it, its admission injected (and sets what running
	// within it needs).
	LetRun()
}

// ByTemplates is Originals, Run and Restore of a TemplatedJob, written once:
// the kind's adapter embeds it, pointed at the adapter itself.
type ByTemplates struct{ Job TemplatedJob }

// Originals captures each pod set's template as Run may change it.
func (b ByTemplates) Originals() []PodSetInfo {
	podSets, _ := b.Job.PodSets()
	return b.Job.Templates().Originals(podSets)
}

// Run injects each pod set's admission into its template and lets the job
// run. All of it is admitted or none of it.
func (b ByTemplates) Run(infos []PodSetInfo) error {
	if err := b.Job.Templates().InjectByName(infos); err != nil {
		return err
	}
	b.Job.LetRun()
	return nil
}

// Restore puts each pod set's originals back.
func (b ByTemplates) Restore(originals []PodSetInfo) bool {
	return b.Job.Templates().RestoreByName(originals)
}
