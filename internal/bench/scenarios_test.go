package bench

import "testing"

// The shipped scenarios parse and have the shapes the issue asks for.
func TestScenarios(t *testing.T) {
	cases := []struct {
		file              string
		queues, workloads int
	}{
		{"saturation.yaml", 10, 10000},
		{"large.yaml", 1000, 50000},
	}
	for _, tc := range cases {
		g, err := Load("../../bench/" + tc.file)
		if err != nil {
			t.Fatal(err)
		}
		p := g.Expand()
		if len(p.Queues) != tc.queues || len(p.Workloads) != tc.workloads {
			t.Errorf("%s: %d queues, %d workloads; want %d and %d", tc.file, len(p.Queues), len(p.Workloads), tc.queues, tc.workloads)
		}
	}
}
