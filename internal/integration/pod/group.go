package pod

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
	"github.com/sluicehq/sluice/internal/workload"
)

// groupKind is the pod group in the job framework
// (kueue.x-k8s.io/pod-group-name + pod-group-total-count): its Pods share
// one Workload named after the group, a podSet per distinct pod shape,
// made once every Pod of the group exists, and the generic reconciler
// drives it like any job. sizers are the kinds that size their groups
// themselves (Registration.GroupSize).
func groupKind(sizers []integration.GroupSizer) integration.Kind {
	return integration.Kind{
		Framework: configapi.FrameworkPod,
		GVK:       Kind.GVK,
		NewObject: Kind.NewObject,
		NewList:   Kind.NewList,
		Finalizer: kueue.ManagedLabel,
		Decide: func(o client.Object) integration.Placement {
			if !groupMember(o) {
				return integration.Placement{}
			}
			return integration.Placement{Managed: true, QueueName: o.GetLabels()[kueue.QueueNameLabel]}
		},
		Group: &integration.GroupShape{
			GroupOf: func(o client.Object) string {
				if !groupMember(o) {
					return ""
				}
				return o.GetLabels()[kueue.PodGroupNameLabel]
			},
			Load: func(ctx context.Context, reader client.Reader, key types.NamespacedName, wl *kueue.Workload) (integration.Group, error) {
				return loadGroup(ctx, reader, key, wl, sizers)
			},
			Owns: isGroupWorkloadOf,
		},
	}
}

// groupMember tells whether a Pod belongs to a group sluice queues.
func groupMember(o client.Object) bool {
	return o.GetLabels()[kueue.ManagedLabel] == "true" && o.GetLabels()[kueue.PodGroupNameLabel] != ""
}

// IsGroupWorkload tells whether a Workload is a pod group's: its Pods must
// stop before its reservation is cleared.
func IsGroupWorkload(wl *kueue.Workload) bool { return wl.Labels[kueue.PodGroupNameLabel] != "" }

// loadGroup reads the Pods of a group and how many it should have.
func loadGroup(ctx context.Context, reader client.Reader, key types.NamespacedName, wl *kueue.Workload, sizers []integration.GroupSizer) (integration.Group, error) {
	list := &corev1.PodList{}
	if err := reader.List(ctx, list, client.InNamespace(key.Namespace), client.MatchingLabels{kueue.PodGroupNameLabel: key.Name}); err != nil {
		return nil, fmt.Errorf("listing the Pods of group %s: %w", key, err)
	}
	pods := slices.DeleteFunc(list.Items, func(p corev1.Pod) bool { return !groupMember(&p) })
	if len(pods) == 0 {
		return nil, nil
	}
	g := &group{name: key.Name, pods: pods, wl: wl}
	for _, size := range sizers {
		n, ok, err := size(ctx, reader, g.representative())
		if err != nil {
			return nil, err
		}
		if ok {
			g.desired, g.sizedByKind = n, true
			return g, nil
		}
	}
	g.desired = annotatedTotal(g.livePods())
	return g, nil
}

// annotatedTotal is the largest total-count its Pods announce (a
// LeaderWorkerSet's groups are sized by the group's size): a member that
// says more grows the group, one that says less can't shrink it. 0: none
// readable (the webhook refuses such Pods).
func annotatedTotal(pods []*corev1.Pod) int {
	total := 0
	for _, p := range pods {
		if n, err := strconv.Atoi(p.Annotations[kueue.PodGroupTotalCountAnno]); err == nil {
			total = max(total, n)
		}
	}
	return total
}

// groupPodSets: one podSet per distinct shape, named by the shape; Pods not
// created yet (fast admission) count in the first shape.
func groupPodSets(pods []corev1.Pod, total int) []kueue.PodSet {
	byShape := map[string]*kueue.PodSet{}
	for i := range pods {
		name := shapeOf(&pods[i])
		if ps, ok := byShape[name]; ok {
			ps.Count++
			continue
		}
		podSets, _ := (&Pod{&pods[i]}).PodSets()
		ps := podSets[0]
		ps.Name = kueue.PodSetReference(name)
		byShape[name] = &ps
	}
	names := slices.Sorted(maps.Keys(byShape))
	out := make([]kueue.PodSet, 0, len(names))
	for _, n := range names {
		out = append(out, *byShape[n])
	}
	if missing := int32(total - len(pods)); missing > 0 && len(out) > 0 {
		out[0].Count += missing
	}
	return out
}

// runningPodSet is the podSet a started Pod holds a place in: the one it
// was started as (its podset label), since starting it injected the
// flavor's node selector and changed its shape.
func runningPodSet(p *corev1.Pod, admitted map[kueue.PodSetReference]integration.PodSetInfo) kueue.PodSetReference {
	if name := kueue.PodSetReference(p.Labels[kueue.PodSetLabel]); name != "" {
		if _, ok := admitted[name]; ok {
			return name
		}
	}
	return kueue.PodSetReference(shapeOf(p))
}

// shapeOf names a Pod's role in its group: a hash of what admission looks
// at (requests, node selector, tolerations, affinity).
func shapeOf(p *corev1.Pod) string {
	h := sha256.New()
	requests := workload.PodRequests(&p.Spec)
	for _, name := range slices.Sorted(maps.Keys(requests)) {
		fmt.Fprintf(h, "%s=%d;", name, requests[name])
	}
	for _, k := range slices.Sorted(maps.Keys(p.Spec.NodeSelector)) {
		fmt.Fprintf(h, "ns:%s=%s;", k, p.Spec.NodeSelector[k])
	}
	// JSON, not %v: tolerations and affinity hold pointers.
	constraints, _ := json.Marshal(struct {
		Tolerations []corev1.Toleration `json:"t"`
		Affinity    *corev1.Affinity    `json:"a"`
	}{p.Spec.Tolerations, p.Spec.Affinity})
	h.Write(constraints)
	return hex.EncodeToString(h.Sum(nil))[:8]
}
