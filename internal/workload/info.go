package workload

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// PodSet is what admission needs of one podSet.
type PodSet struct {
	Name  kueue.PodSetReference
	Count int32
	// MinCount is the fewest pods the podSet may be admitted with (partial
	// admission); equal to Count when it must run in full.
	MinCount int32
	// PerPod is the effective request of one pod.
	PerPod Requests
	// Scheduling constraints that decide which flavors fit.
	NodeSelector map[string]string
	Affinity     *corev1.NodeSelector
	Tolerations  []corev1.Toleration
}

// Info is a pending or admitted workload as admission sees it. It is built
// once per version of the object and shared read-only.
type Info struct {
	Key       string // namespace/name
	Namespace string
	Name      string
	UID       string
	// ResourceVersion is the version the decision is based on; writes are
	// conditional on it.
	ResourceVersion string
	LocalQueue      string
	Priority        int32
	// QueueTime orders workloads of equal priority: creation, or the last
	// eviction.
	QueueTime time.Time
	PodSets   []PodSet
	// Shape identifies workloads with the same requirements in the same
	// LocalQueue: one that didn't fit says the others won't either.
	Shape string
	// Obj is the object the Info was built from; never modified.
	Obj *kueue.Workload
}

// Partial tells whether some podSet may be admitted with fewer pods.
func (i *Info) Partial() bool {
	for _, ps := range i.PodSets {
		if ps.MinCount < ps.Count {
			return true
		}
	}
	return false
}

// Key returns the namespace/name key of a workload.
func Key(wl *kueue.Workload) string { return wl.Namespace + "/" + wl.Name }

// NewInfo builds the admission view of a workload, counting its pods'
// requests as they are.
func NewInfo(wl *kueue.Workload) *Info { return NewInfoWith(wl, nil) }

// NewInfoWith builds the admission view of a workload, counting its pods'
// requests as the resource policy says (nil: as they are).
func NewInfoWith(wl *kueue.Workload, resources *ResourcePolicy) *Info {
	info := &Info{
		Key:             Key(wl),
		Namespace:       wl.Namespace,
		Name:            wl.Name,
		UID:             string(wl.UID),
		ResourceVersion: wl.ResourceVersion,
		LocalQueue:      string(wl.Spec.QueueName),
		QueueTime:       QueueTime(wl),
		Obj:             wl,
	}
	if wl.Spec.Priority != nil {
		info.Priority = *wl.Spec.Priority
	}
	for i := range wl.Spec.PodSets {
		ps := &wl.Spec.PodSets[i]
		spec := &ps.Template.Spec
		p := PodSet{
			Name:         ps.Name,
			Count:        ps.Count,
			MinCount:     ps.Count,
			PerPod:       resources.Apply(PodRequests(spec)),
			NodeSelector: spec.NodeSelector,
			Tolerations:  spec.Tolerations,
		}
		if ps.MinCount != nil && *ps.MinCount < ps.Count {
			p.MinCount = *ps.MinCount
		}
		if a := spec.Affinity; a != nil && a.NodeAffinity != nil {
			p.Affinity = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
		}
		info.PodSets = append(info.PodSets, p)
	}
	info.Shape = shapeOf(info)
	return info
}

// QueueTime is when the workload (re)joined its queue: its creation, or the
// time of its last eviction or requeue. (An admission again turns Evicted
// False: that time is not a queueing.)
func QueueTime(wl *kueue.Workload) time.Time {
	t := wl.CreationTimestamp.Time
	if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted); c != nil && c.Status == metav1.ConditionTrue && c.LastTransitionTime.After(t) {
		t = c.LastTransitionTime.Time
	}
	if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadRequeued); c != nil && c.LastTransitionTime.After(t) {
		t = c.LastTransitionTime.Time
	}
	return t
}

// shapeOf hashes everything admission looks at besides priority and time.
func shapeOf(info *Info) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%s|", info.Namespace, info.LocalQueue)
	for _, ps := range info.PodSets {
		fmt.Fprintf(h, "%s:%d-%d:", ps.Name, ps.MinCount, ps.Count)
		names := make([]string, 0, len(ps.PerPod))
		for name := range ps.PerPod {
			names = append(names, string(name))
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(h, "%s=%d,", n, ps.PerPod[corev1.ResourceName(n)])
		}
		keys := make([]string, 0, len(ps.NodeSelector))
		for k, v := range ps.NodeSelector {
			keys = append(keys, k+"="+v)
		}
		slices.Sort(keys)
		// JSON, not %v: tolerations and affinity hold pointers, whose
		// addresses would make equal shapes differ.
		constraints, _ := json.Marshal(struct {
			Affinity    *corev1.NodeSelector `json:"a"`
			Tolerations []corev1.Toleration  `json:"t"`
		}{ps.Affinity, ps.Tolerations})
		fmt.Fprintf(h, "ns:%s|%s|", strings.Join(keys, ","), constraints)
	}
	return fmt.Sprintf("%x", h.Sum64())
}
