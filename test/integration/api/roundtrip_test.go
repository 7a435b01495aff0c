package api

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// TestFullObjectsRoundTrip writes one object of every kind with every field
// set, status included, and reads back exactly what was written: nothing is
// pruned, renamed or defaulted away.
func TestFullObjectsRoundTrip(t *testing.T) {
	paths, err := filepath.Glob("testdata/full/*.yaml")
	if err != nil || len(paths) != 7 {
		t.Fatalf("want one full example per kind (7), found %d (%v)", len(paths), err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want := readObjects(t, path)[0]
			ctx := context.Background()
			status, hasStatus := want.Object["status"]
			obj := want.DeepCopy()
			delete(obj.Object, "status")
			if err := cluster.Client.Create(ctx, obj); err != nil {
				t.Fatalf("create: %v", err)
			}
			t.Cleanup(func() { _ = cluster.Client.Delete(context.Background(), obj) })
			got := readBack(t, want)
			for _, field := range []string{"spec", "value", "description"} {
				if diff := cmp.Diff(want.Object[field], got.Object[field]); diff != "" {
					t.Errorf("%s changed on the way through the API server (-written +read):\n%s", field, diff)
				}
			}
			if !hasStatus {
				return
			}
			// Compare what the API server stored, as its answer to the write:
			// sluice's queue status writer may rewrite the counts a moment later.
			var stored *unstructured.Unstructured
			err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				stored = readBack(t, want)
				stored.Object["status"] = status
				return cluster.Client.Status().Update(ctx, stored)
			})
			if err != nil {
				t.Fatalf("status update: %v", err)
			}
			got = stored
			wantStatus, gotStatus := status.(map[string]any), got.Object["status"].(map[string]any)
			// The Active condition of queues belongs to sluice's controllers,
			// which run in this suite; every condition written must survive.
			dropControllerConditions(gotStatus)
			if diff := cmp.Diff(wantStatus, gotStatus); diff != "" {
				t.Errorf("status changed on the way through the API server (-written +read):\n%s", diff)
			}
		})
	}
}

// TestKueueManifestsApplyUnchanged applies manifests written for Kueue
// v1beta2 without touching them.
func TestKueueManifestsApplyUnchanged(t *testing.T) {
	ctx := context.Background()
	for _, obj := range readObjects(t, "testdata/kueue/queues.yaml") {
		if err := cluster.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner("kubectl"), client.ForceOwnership); err != nil {
			t.Errorf("applying %s %s: %v", obj.GetKind(), obj.GetName(), err)
			continue
		}
		t.Cleanup(func() { _ = cluster.Client.Delete(context.Background(), obj) })
	}
	wl := &kueue.Workload{}
	if err := cluster.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "sample-job"}, wl); err != nil {
		t.Fatal(err)
	}
	if wl.Spec.PodSets[0].Count != 3 || wl.Spec.QueueName != "team-a-queue" || *wl.Spec.Priority != 10000 || !*wl.Spec.Active {
		t.Errorf("the Workload did not come back as written: %+v", wl.Spec)
	}
}

func readBack(t *testing.T, like *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(like.GroupVersionKind())
	if err := cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(like), got); err != nil {
		t.Fatalf("get: %v", err)
	}
	return got
}

func dropControllerConditions(status map[string]any) {
	conditions, ok := status["conditions"].([]any)
	if !ok {
		return
	}
	kept := conditions[:0]
	for _, c := range conditions {
		if c.(map[string]any)["type"] != kueue.ConditionActive || c.(map[string]any)["reason"] == "Active" {
			kept = append(kept, c)
		}
	}
	status["conditions"] = kept
}

func readObjects(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []*unstructured.Unstructured
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatal(err)
		}
		obj := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal(doc, &obj.Object); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
}
