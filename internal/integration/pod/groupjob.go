package pod

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
	"github.com/sluicehq/sluice/internal/workload"
)

// group is a pod group as one job of the framework: its Pods are the
// members, and it reports its size against its Workload's admission.
type group struct {
	name string
	// pods are every member, those being deleted included.
	pods []corev1.Pod
	// desired is how many Pods the group should have.
	desired int
	// sizedByKind: desired comes from the kind that made the Pods (a
	// StatefulSet's replicas), not from the Pods' annotations, and may
	// shrink an admitted group.
	sizedByKind bool
	// wl is the group's Workload, or nil.
	wl      *kueue.Workload
	changed []client.Object
}

var _ integration.Group = (*group)(nil)
var _ integration.ReadyCounter = (*group)(nil)

func live(p *corev1.Pod) bool { return p.DeletionTimestamp.IsZero() }

func ended(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// running: a Pod that was started and has not ended may run, being
// deleted or not.
func running(p *corev1.Pod) bool { return !gated(p) && !ended(p) }

func (g *group) livePods() []*corev1.Pod {
	var out []*corev1.Pod
	for i := range g.pods {
		if live(&g.pods[i]) {
			out = append(out, &g.pods[i])
		}
	}
	return out
}

// representative is the Pod that speaks for the group (its queue, labels,
// priority, events): the first live one.
func (g *group) representative() *corev1.Pod {
	if pods := g.livePods(); len(pods) > 0 {
		return pods[0]
	}
	return &g.pods[0]
}

func (g *group) Object() client.Object { return g.representative() }
func (g *group) GroupName() string     { return g.name }
func (g *group) WorkloadLabels() map[string]string {
	return map[string]string{kueue.PodGroupNameLabel: g.name}
}

// IsSuspended: no Pod of the group runs.
func (g *group) IsSuspended() bool { return !g.Active() }

// Suspend: a running Pod can't be suspended; the reconciler deletes the
// group's running Pods instead.
func (g *group) Suspend() {}

func (g *group) Active() bool {
	return slices.ContainsFunc(g.pods, func(p corev1.Pod) bool { return running(&p) })
}

func (g *group) Members() []client.Object {
	out := make([]client.Object, 0, len(g.pods))
	for i := range g.pods {
		out = append(out, &g.pods[i])
	}
	return out
}

func (g *group) Changed() []client.Object { return g.changed }

func (g *group) Running() []client.Object {
	var out []client.Object
	for i := range g.pods {
		if p := &g.pods[i]; running(p) && live(p) {
			out = append(out, p)
		}
	}
	return out
}

func (g *group) Waiting() bool {
	return slices.ContainsFunc(g.livePods(), func(p *corev1.Pod) bool { return gated(p) })
}

// Complete: every Pod of the group exists, or it asked for fast admission.
func (g *group) Complete() bool {
	pods := g.livePods()
	if len(pods) == 0 || g.desired < 1 {
		return false
	}
	return len(pods) >= g.desired || pods[0].Annotations[kueue.PodGroupFastAdmissionAnno] == "true"
}

// LetGo: Pods being deleted, every Pod once the Workload finished, and
// failed Pods that replacements may take the place of.
func (g *group) LetGo() []client.Object {
	finished := g.wl != nil && workload.IsFinished(g.wl)
	var out []client.Object
	for i := range g.pods {
		p := &g.pods[i]
		retriable := p.Status.Phase == corev1.PodFailed && p.Annotations[kueue.RetriableInGroupAnno] != "false"
		if finished || !live(p) || retriable {
			out = append(out, p)
		}
	}
	return out
}

// PodSets: pending, one podSet per distinct shape of its Pods, the missing
// ones (fast admission) in the first; admitted, the admission's podSets
// resized to the group's size. Fewer Pods than admitted leaves places to
// reclaim, from the last podSet backwards; more than the admission has
// room for (after reclaimed places) grows the first podSet beyond it, so
// the group is admitted again at its new size.
func (g *group) PodSets() ([]kueue.PodSet, error) {
	if g.wl == nil || !workload.HasQuotaReservation(g.wl) {
		pods := make([]corev1.Pod, 0, len(g.pods))
		for _, p := range g.livePods() {
			pods = append(pods, *p)
		}
		return groupPodSets(pods, g.desired), nil
	}
	podSets := make([]kueue.PodSet, len(g.wl.Spec.PodSets))
	var admitted, reclaimable int32
	for i := range g.wl.Spec.PodSets {
		podSets[i] = *g.wl.Spec.PodSets[i].DeepCopy()
		admitted += podSets[i].Count
	}
	for _, rp := range g.wl.Status.ReclaimablePods {
		reclaimable += rp.Count
	}
	desired := int32(g.desired)
	if desired < 1 {
		// Unreadable (or a StatefulSet scaled to zero whose Pods still
		// run): nothing is given back before the Pods are gone.
		return podSets, nil
	}
	if grown := desired - (admitted - reclaimable); grown > 0 {
		podSets[0].Count += grown
		return podSets, nil
	}
	if !g.sizedByKind {
		// Annotations are the tenant's to write: a lower count gives no
		// place back while the Pods it admitted may run.
		desired = admitted - reclaimable
	}
	for i, less := len(podSets)-1, admitted-desired; i >= 0 && less > 0; i-- {
		take := min(less, podSets[i].Count)
		podSets[i].Count -= take
		less -= take
	}
	return podSets, nil
}

// Originals: the Pods of a group are never restored (they stop by
// deletion).
func (g *group) Originals() []integration.PodSetInfo     { return nil }
func (g *group) Restore([]integration.PodSetInfo) bool   { return false }
func (g *group) ReclaimablePods() []kueue.ReclaimablePod { return nil }
func (g *group) ManagedElsewhere() string                { return "" }

// Run starts the group's gated Pods, each with its podSet's flavor, in the
// places its admission has: per podSet, its admitted count less its places
// given back (a shrunk group's) and its Pods that run (a replacement starts
// only in the place of one that ended), and in all: a Pod that joins an
// admitted group (a tenant's Pod dressed as a member) waits unless one
// ended.
func (g *group) Run(infos []integration.PodSetInfo) error {
	byName := map[kueue.PodSetReference]integration.PodSetInfo{}
	room := map[kueue.PodSetReference]int32{}
	var total int32
	for _, info := range infos {
		byName[info.Name] = info
		room[info.Name] = info.Count
		total += info.Count
	}
	if g.wl != nil {
		for _, rp := range g.wl.Status.ReclaimablePods {
			room[rp.Name] -= rp.Count
			total -= rp.Count
		}
	}
	for _, p := range g.livePods() {
		if running(p) {
			room[runningPodSet(p, byName)]--
			total--
		}
	}
	for _, p := range g.livePods() {
		if !gated(p) {
			continue
		}
		name := kueue.PodSetReference(shapeOf(p))
		info, ok := byName[name]
		if !ok || room[name] <= 0 || total <= 0 {
			continue // no place for it in the admission: it waits
		}
		room[name]--
		total--
		if err := (&Pod{p}).Run([]integration.PodSetInfo{info}); err != nil {
			return fmt.Errorf("starting Pod %s of group %s: %w", p.Name, g.name, err)
		}
		g.changed = append(g.changed, p)
	}
	return nil
}

// Finished: an admitted group is done when every Pod succeeded (not for
// serving groups), or a Pod that may not be retried failed.
func (g *group) Finished() (bool, bool, string) {
	if g.wl == nil || !workload.HasQuotaReservation(g.wl) || !workload.IsAdmitted(g.wl) {
		return false, false, ""
	}
	var total int32
	for _, ps := range g.wl.Spec.PodSets {
		total += ps.Count
	}
	succeeded := int32(0)
	for i := range g.pods {
		switch p := &g.pods[i]; p.Status.Phase {
		case corev1.PodSucceeded:
			succeeded++
		case corev1.PodFailed:
			if p.Annotations[kueue.RetriableInGroupAnno] == "false" {
				return true, false, "a Pod of the group failed and may not be retried (retriable-in-group: false)"
			}
		}
	}
	if g.representative().Annotations[kueue.PodGroupServingAnno] != "true" && succeeded >= total {
		return true, true, fmt.Sprintf("all %d Pods of the group succeeded", total)
	}
	return false, false, ""
}

// ReadyPods counts the group's live Pods that are ready or succeeded.
func (g *group) ReadyPods() int32 {
	var ready int32
	for _, p := range g.livePods() {
		ready += readyPods(p)
	}
	return ready
}
