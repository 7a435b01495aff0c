package devcluster

import (
	"context"
	"fmt"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// kwokNodeAnnotation marks the nodes kwok simulates.
const kwokNodeAnnotation = "kwok.x-k8s.io/node"

// NodeOptions shape the simulated nodes.
type NodeOptions struct {
	// Count is how many nodes.
	Count int
	// CPU, Memory and Pods are each node's capacity.
	CPU, Memory, Pods string
	// FlavorLabels splits the nodes into groups: groups separated by ";",
	// each "key=value[,key=value...]" optionally followed by
	// "|key=value:Effect[,...]" taints. Nodes are shared out evenly, in
	// order.
	FlavorLabels string
}

// DefaultFlavorLabels: half the nodes on-demand, half spot and tainted, to
// match the sample flavors.
const DefaultFlavorLabels = "instance-type=on-demand;instance-type=spot|spot=true:NoSchedule"

// nodeGroup is the labels and taints of a share of the nodes.
type nodeGroup struct {
	labels map[string]string
	taints []corev1.Taint
}

// parseNodeGroups reads NodeOptions.FlavorLabels; errors name the flag.
func parseNodeGroups(spec string) ([]nodeGroup, error) {
	var groups []nodeGroup
	for i, part := range strings.Split(spec, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		labelPart, taintPart, _ := strings.Cut(part, "|")
		g := nodeGroup{labels: map[string]string{}}
		for _, kv := range splitList(labelPart) {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return nil, fmt.Errorf("--node-flavor-labels group %d: label %q is not key=value", i+1, kv)
			}
			if errs := validation.IsQualifiedName(k); len(errs) > 0 {
				return nil, fmt.Errorf("--node-flavor-labels group %d: label key %q: %s", i+1, k, strings.Join(errs, "; "))
			}
			if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
				return nil, fmt.Errorf("--node-flavor-labels group %d: label value %q: %s", i+1, v, strings.Join(errs, "; "))
			}
			g.labels[k] = v
		}
		for _, t := range splitList(taintPart) {
			kv, effect, ok := strings.Cut(t, ":")
			k, v, _ := strings.Cut(kv, "=")
			e := corev1.TaintEffect(effect)
			if !ok || k == "" || (e != corev1.TaintEffectNoSchedule && e != corev1.TaintEffectPreferNoSchedule && e != corev1.TaintEffectNoExecute) {
				return nil, fmt.Errorf("--node-flavor-labels group %d: taint %q is not key[=value]:NoSchedule|PreferNoSchedule|NoExecute", i+1, t)
			}
			g.taints = append(g.taints, corev1.Taint{Key: k, Value: v, Effect: e})
		}
		groups = append(groups, g)
	}
	if len(groups) == 0 {
		groups = []nodeGroup{{labels: map[string]string{}}}
	}
	return groups, nil
}

func splitList(s string) []string {
	var out []string
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// buildNodes makes the simulated nodes: sluice-node-<i>, the groups shared
// out evenly in order.
func buildNodes(opts NodeOptions) ([]*corev1.Node, error) {
	if opts.Count < 1 {
		return nil, fmt.Errorf("--nodes must be at least 1, got %d", opts.Count)
	}
	capacity := corev1.ResourceList{}
	for name, value := range map[corev1.ResourceName]string{corev1.ResourceCPU: opts.CPU, corev1.ResourceMemory: opts.Memory, corev1.ResourcePods: opts.Pods} {
		q, err := resource.ParseQuantity(value)
		if err != nil || q.Sign() <= 0 {
			return nil, fmt.Errorf("--node-%s: %q is not a positive quantity", name, value)
		}
		capacity[name] = q
	}
	groups, err := parseNodeGroups(opts.FlavorLabels)
	if err != nil {
		return nil, err
	}
	nodes := make([]*corev1.Node, 0, opts.Count)
	for i := range opts.Count {
		g := groups[i*len(groups)/opts.Count]
		name := fmt.Sprintf("sluice-node-%d", i)
		labels := map[string]string{corev1.LabelHostname: name, "type": "kwok"}
		maps.Copy(labels, g.labels)
		nodes = append(nodes, &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: map[string]string{kwokNodeAnnotation: "fake"}},
			Spec:       corev1.NodeSpec{Taints: append([]corev1.Taint(nil), g.taints...)},
			Status:     corev1.NodeStatus{Capacity: capacity.DeepCopy(), Allocatable: capacity.DeepCopy()},
		})
	}
	return nodes, nil
}

func createNodes(ctx context.Context, c client.Client, nodes []*corev1.Node) error {
	for _, n := range nodes {
		if err := c.Create(ctx, n.DeepCopy()); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating node %s: %w", n.Name, err)
		}
	}
	return nil
}

// nodesReady tells whether every simulated node is Ready and free of the
// not-ready taint (kube-controller-manager lifts it once kwok's heartbeats
// make the node Ready).
func nodesReady(ctx context.Context, c client.Client, want int) (bool, error) {
	list := &corev1.NodeList{}
	if err := c.List(ctx, list); err != nil {
		return false, nil
	}
	ready := 0
	for _, n := range list.Items {
		if n.Annotations[kwokNodeAnnotation] != "fake" || !nodeReady(&n) {
			continue
		}
		ready++
	}
	return ready >= want, nil
}

func nodeReady(n *corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
			return false
		}
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
