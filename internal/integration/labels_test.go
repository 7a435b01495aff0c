package integration

import (
	"maps"
	"testing"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

func TestCopyLabels(t *testing.T) {
	wl := map[string]string{kueue.JobUIDLabel: "real-uid"}
	job := map[string]string{"team": "ml", "cost-center": "42", kueue.JobUIDLabel: "forged", "other": "x"}
	CopyLabels(wl, job, []string{"team", "cost-center", "absent", kueue.JobUIDLabel})
	want := map[string]string{kueue.JobUIDLabel: "real-uid", "team": "ml", "cost-center": "42"}
	if !maps.Equal(wl, want) {
		t.Errorf("labels = %v, want %v", wl, want)
	}
}
