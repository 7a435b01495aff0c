package bench

import (
	"slices"
	"time"
)

// Latency summarizes durations in seconds.
type Latency struct {
	Count       int     `json:"count"`
	MeanSeconds float64 `json:"meanSeconds"`
	P50Seconds  float64 `json:"p50Seconds"`
	P90Seconds  float64 `json:"p90Seconds"`
	P99Seconds  float64 `json:"p99Seconds"`
	MaxSeconds  float64 `json:"maxSeconds"`
}

// summarize computes the mean and nearest-rank percentiles of ds.
func summarize(ds []time.Duration) Latency {
	if len(ds) == 0 {
		return Latency{}
	}
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	var sum time.Duration
	for _, d := range sorted {
		sum += d
	}
	return Latency{
		Count:       len(sorted),
		MeanSeconds: (sum / time.Duration(len(sorted))).Seconds(),
		P50Seconds:  percentile(sorted, 50).Seconds(),
		P90Seconds:  percentile(sorted, 90).Seconds(),
		P99Seconds:  percentile(sorted, 99).Seconds(),
		MaxSeconds:  sorted[len(sorted)-1].Seconds(),
	}
}

// percentile is the nearest-rank percentile p of sorted (ascending).
func percentile(sorted []time.Duration, p int) time.Duration {
	rank := (p*len(sorted) + 99) / 100 // ceil(p/100 * n)
	return sorted[max(rank, 1)-1]
}

// peakRate is the most events in any window of the given length, per
// second; offsets are the events' times from a common start.
func peakRate(offsets []time.Duration, window time.Duration) float64 {
	sorted := slices.Clone(offsets)
	slices.Sort(sorted)
	most, first := 0, 0
	for last := range sorted {
		for sorted[last]-sorted[first] >= window {
			first++
		}
		most = max(most, last-first+1)
	}
	return float64(most) / window.Seconds()
}

// busyTime is how long the spans cover within [from, to), each span counted
// once (spans of one holder do not overlap); an open span ends at to.
func busyTime(spans []span, from, to time.Time) time.Duration {
	var total time.Duration
	for _, s := range spans {
		end := s.to
		if end.IsZero() || end.After(to) {
			end = to
		}
		begin := s.from
		if begin.Before(from) {
			begin = from
		}
		if end.After(begin) {
			total += end.Sub(begin)
		}
	}
	return total
}
