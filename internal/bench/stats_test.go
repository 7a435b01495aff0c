package bench

import (
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i // 100..1, unsorted on purpose
	}
	cases := []struct {
		name string
		in   []time.Duration
		want Latency
	}{
		{"empty", nil, Latency{}},
		{"one", ms(250), Latency{Count: 1, MeanSeconds: 0.25, P50Seconds: 0.25, P90Seconds: 0.25, P99Seconds: 0.25, MaxSeconds: 0.25}},
		{"four", ms(4000, 1000, 3000, 2000), Latency{Count: 4, MeanSeconds: 2.5, P50Seconds: 2, P90Seconds: 4, P99Seconds: 4, MaxSeconds: 4}},
		{"hundred", ms(hundred...), Latency{Count: 100, MeanSeconds: 0.0505, P50Seconds: 0.05, P90Seconds: 0.09, P99Seconds: 0.099, MaxSeconds: 0.1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := summarize(tc.in); got != tc.want {
				t.Errorf("summarize = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestPeakRate(t *testing.T) {
	s := func(v ...float64) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x * float64(time.Second))
		}
		return out
	}
	cases := []struct {
		name string
		in   []time.Duration
		want float64
	}{
		{"none", nil, 0},
		{"spread", s(0, 6, 12), 0.2},
		{"burst inside a window", s(10, 10.5, 11, 14.9, 20), 0.8},
		{"window is half-open", s(0, 5, 10), 0.2},
		{"unsorted", s(3, 1, 2, 30), 0.6},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := peakRate(tc.in, 5*time.Second); got != tc.want {
				t.Errorf("peakRate = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestBusyTime(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	cases := []struct {
		name  string
		spans []span
		want  time.Duration
	}{
		{"none", nil, 0},
		{"inside", []span{{at(1), at(3)}}, 2 * time.Second},
		{"clipped at both ends", []span{{at(-5), at(2)}, {at(8), at(20)}}, 4 * time.Second},
		{"open span ends at the end", []span{{from: at(7)}}, 3 * time.Second},
		{"evicted and run again", []span{{at(1), at(2)}, {at(4), at(6)}}, 3 * time.Second},
		{"outside", []span{{at(11), at(12)}}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := busyTime(tc.spans, at(0), at(10)); got != tc.want {
				t.Errorf("busyTime = %v, want %v", got, tc.want)
			}
		})
	}
}
