package apply

import (
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/workload"
)

// ownWrites remembers, per Workload, the version the scheduler's last status
// write produced, until the watch delivers it. A decision made on the version
// before that write is applied on top of the written one: otherwise the
// write would be refused as a conflict (costing a write, a read and a cycle)
// or, for a pending verdict the object doesn't show yet, be sent twice.
type ownWrites struct {
	mu    sync.Mutex
	byKey map[string]ownWrite
}

// ownWrite is a status write: the versions it supersedes (the one it was
// made on and, for writes made back to back on top of our own, every one
// before it in the chain), the version it produced and the conditions it
// left. Nothing else in the status changes on a pending write, so that is
// enough to rebuild the written object.
type ownWrite struct {
	bases      []string
	written    string
	conditions []metav1.Condition
}

func (w ownWrite) supersedes(version string) bool { return slices.Contains(w.bases, version) }

func newOwnWrites() *ownWrites { return &ownWrites{byKey: map[string]ownWrite{}} }

// record notes that a write on version base produced written.
func (o *ownWrites) record(key, base string, written *kueue.Workload) {
	o.mu.Lock()
	defer o.mu.Unlock()
	bases := []string{base}
	if w, ok := o.byKey[key]; ok && w.written == base {
		// A write on top of our own: the watch may still deliver any
		// version of the chain, and a decision made on one of them goes
		// on top of the newest. Keeping only the first would drop the
		// record when the watch shows the middle one, and a decision made
		// on it would then be sent on a version that is certain to
		// conflict.
		bases = append(w.bases, base)
	}
	o.byKey[key] = ownWrite{bases: bases, written: written.ResourceVersion, conditions: written.Status.Conditions}
}

// latest is the newest version of info's Workload known here: info's own,
// or, when info is the version a write of ours was made on, the written one.
// The caller may modify the result.
func (o *ownWrites) latest(info *workload.Info) *kueue.Workload {
	o.mu.Lock()
	w, ok := o.byKey[info.Key]
	o.mu.Unlock()
	obj := info.Obj.DeepCopy()
	if ok && w.supersedes(info.Obj.ResourceVersion) {
		obj.ResourceVersion = w.written
		obj.Status.Conditions = make([]metav1.Condition, len(w.conditions))
		for i := range w.conditions {
			w.conditions[i].DeepCopyInto(&obj.Status.Conditions[i])
		}
	}
	return obj
}

// conditions are the status conditions of the Workload's newest known
// version, read-only: the cycle asks this of every pending decision, and a
// copy of the whole object each time would be waste.
func (o *ownWrites) conditions(info *workload.Info) []metav1.Condition {
	o.mu.Lock()
	defer o.mu.Unlock()
	if w, ok := o.byKey[info.Key]; ok && w.supersedes(info.Obj.ResourceVersion) {
		return w.conditions
	}
	return info.Obj.Status.Conditions
}

// seen drops what is known of a Workload once the watch delivered a version
// newer than the one a write of ours produced. The written version itself
// keeps the record: a cycle running then may still decide on the version
// before it, and its write must go on top of ours, not be refused.
func (o *ownWrites) seen(wl *kueue.Workload) {
	key := workload.Key(wl)
	o.mu.Lock()
	defer o.mu.Unlock()
	if w, ok := o.byKey[key]; ok && !w.supersedes(wl.ResourceVersion) && w.written != wl.ResourceVersion {
		delete(o.byKey, key)
	}
}

// forget drops what is known of a Workload.
func (o *ownWrites) forget(key string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.byKey, key)
}
