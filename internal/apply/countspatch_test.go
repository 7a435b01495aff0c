package apply

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// A queue's status patch carries its counts even when they did not change
// (zero on a new queue), beside what did change; a kind without counts
// gets the merge patch as it is.
func TestQueueStatusPatchAlwaysCarriesTheCounts(t *testing.T) {
	lq := &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Name: "lq", Namespace: "team"}}
	patch := withCounts{client.MergeFrom(lq.DeepCopy())}
	lq.Status.FlavorsReservation = []kueue.LocalQueueFlavorUsage{{Name: "default"}}
	lq.Status.AdmittedWorkloads = 2
	data, err := patch.Data(lq)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	want := map[string]any{"pendingWorkloads": 0.0, "reservingWorkloads": 0.0, "admittedWorkloads": 2.0,
		"flavorsReservation": []any{map[string]any{"name": "default", "resources": nil}}}
	if diff := cmp.Diff(want, got["status"]); diff != "" {
		t.Errorf("status patch (-want +got):\n%s", diff)
	}

	co := &kueue.Cohort{ObjectMeta: metav1.ObjectMeta{Name: "all"}}
	inner := client.MergeFrom(co.DeepCopy())
	co.Status.FairSharing = &kueue.FairSharingStatus{WeightedShare: 3}
	plain, _ := inner.Data(co)
	counted, err := withCounts{inner}.Data(co)
	if err != nil || string(counted) != string(plain) {
		t.Errorf("a Cohort's patch: %s (%v), want the merge patch %s", counted, err, plain)
	}
}
