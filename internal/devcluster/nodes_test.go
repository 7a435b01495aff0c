package devcluster

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestBuildNodes(t *testing.T) {
	nodes, err := buildNodes(NodeOptions{Count: 4, CPU: "8", Memory: "16Gi", Pods: "110", FlavorLabels: DefaultFlavorLabels})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 4 {
		t.Fatalf("got %d nodes, want 4", len(nodes))
	}
	wantType := []string{"on-demand", "on-demand", "spot", "spot"}
	for i, n := range nodes {
		if got := n.Labels["instance-type"]; got != wantType[i] {
			t.Errorf("node %d instance-type = %q, want %q", i, got, wantType[i])
		}
		if n.Annotations[kwokNodeAnnotation] != "fake" {
			t.Errorf("node %d lacks the kwok annotation", i)
		}
		spot := wantType[i] == "spot"
		if tainted := len(n.Spec.Taints) == 1 && n.Spec.Taints[0] == (corev1.Taint{Key: "spot", Value: "true", Effect: corev1.TaintEffectNoSchedule}); tainted != spot {
			t.Errorf("node %d taints = %v, want the spot taint only on spot nodes", i, n.Spec.Taints)
		}
		if cpu := n.Status.Allocatable[corev1.ResourceCPU]; cpu.Cmp(resource.MustParse("8")) != 0 {
			t.Errorf("node %d allocatable cpu = %s, want 8", i, cpu.String())
		}
	}
	// Three nodes over two groups: the first group gets the extra one.
	nodes, err = buildNodes(NodeOptions{Count: 3, CPU: "1", Memory: "1Gi", Pods: "10", FlavorLabels: "a=1;a=2"})
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{nodes[0].Labels["a"], nodes[1].Labels["a"], nodes[2].Labels["a"]}; strings.Join(got, ",") != "1,1,2" {
		t.Errorf("groups over 3 nodes = %v, want 1,1,2", got)
	}
}

func TestBuildNodesRejectsBadFlags(t *testing.T) {
	base := NodeOptions{Count: 2, CPU: "1", Memory: "1Gi", Pods: "10"}
	cases := []struct {
		name    string
		mutate  func(*NodeOptions)
		wantErr string
	}{
		{"no nodes", func(o *NodeOptions) { o.Count = 0 }, "--nodes must be at least 1"},
		{"bad cpu", func(o *NodeOptions) { o.CPU = "lots" }, "--node-cpu"},
		{"negative memory", func(o *NodeOptions) { o.Memory = "-1Gi" }, "--node-memory"},
		{"label without value", func(o *NodeOptions) { o.FlavorLabels = "instance-type" }, "is not key=value"},
		{"bad label key", func(o *NodeOptions) { o.FlavorLabels = "bad key=x" }, "label key"},
		{"bad taint effect", func(o *NodeOptions) { o.FlavorLabels = "a=b|spot=true:Sometimes" }, "taint"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := base
			tc.mutate(&opts)
			_, err := buildNodes(opts)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("buildNodes = %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}
