package bench

import (
	"errors"
	"os"
	"sync/atomic"
	"testing"
)

func TestInParallelRunsEachIndexOnce(t *testing.T) {
	var seen [100]atomic.Int32
	if err := inParallel(100, 7, func(i int) error { seen[i].Add(1); return nil }); err != nil {
		t.Fatal(err)
	}
	for i := range seen {
		if n := seen[i].Load(); n != 1 {
			t.Fatalf("index %d ran %d times", i, n)
		}
	}
}

// An error stops the feeding instead of blocking on workers that quit.
func TestInParallelStopsOnTheFirstError(t *testing.T) {
	boom := errors.New("boom")
	var ran atomic.Int32
	err := inParallel(10000, 2, func(i int) error {
		ran.Add(1)
		if i == 3 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || ran.Load() >= 10000 {
		t.Fatalf("err %v after %d runs", err, ran.Load())
	}
}

func TestMultiKueueScenarioIsValidated(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"zero jobs": "multikueue: {jobs: 0, creators: 1, workers: 1, podsPerJob: 1}", "unknown field": "multikueue: {jobs: 1, creators: 1, workers: 1, podsPerJob: 1, extra: 2}"} {
		path := dir + "/" + name + ".yaml"
		if err := writeFile(path, body); err != nil {
			t.Fatal(err)
		}
		if _, err := loadMultiKueue(path); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if IsMultiKueueScenario("../../bench/baseline.yaml") || !IsMultiKueueScenario("../../bench/multikueue.yaml") {
		t.Fatal("IsMultiKueueScenario can't tell the scenario files apart")
	}
}

func writeFile(path, body string) error { return os.WriteFile(path, []byte(body), 0o600) }
