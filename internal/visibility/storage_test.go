package visibility

import (
	"math"
	"testing"

	"github.com/sluicehq/sluice/internal/queue"
	"github.com/sluicehq/sluice/internal/workload"
)

// A page never reaches past the end, whatever the numbers (huge offsets
// and limits must not overflow into a panic).
func TestPageOf(t *testing.T) {
	var positions []queue.Position
	for i, name := range []string{"a", "b", "c"} {
		positions = append(positions, queue.Position{Info: &workload.Info{Name: name, Namespace: "ns"}, InClusterQueue: i})
	}
	for _, tc := range []struct {
		offset, limit int64
		want          string
	}{
		{0, 1000, "abc"}, {1, 1, "b"}, {2, 5, "c"}, {3, 1, ""}, {math.MaxInt64, math.MaxInt64, ""}, {1, math.MaxInt64, "bc"}, {-1, -1, ""},
	} {
		got := ""
		for _, item := range pageOf(positions, tc.offset, tc.limit) {
			got += item.Name
		}
		if got != tc.want {
			t.Errorf("offset %d limit %d: got %q, want %q", tc.offset, tc.limit, got, tc.want)
		}
	}
}
