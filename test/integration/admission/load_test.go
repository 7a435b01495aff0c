package admission

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// Acceptance 7: 1,000 workloads created concurrently across 10
// ClusterQueues in 2 cohorts with random sizes. The quota invariant holds at
// samples during the run and at the end; then, finishing what runs until
// everything ran, each workload is admitted exactly once.
func TestQuotaNeverExceededUnderLoad(t *testing.T) {
	const (
		queues    = 10
		workloads = 1000
		creators  = 16
	)
	rng := rand.New(rand.NewPCG(7, 11)) // seeded: the same sizes every run
	ns, rf := namespace(t, nil), cluster.Unique("rf")
	t.Cleanup(func() { cluster.DeleteWorkloads(t, ns) })
	cluster.MustCreate(t, flavor(rf, nil))
	cohorts := []string{cluster.Unique("cohort"), cluster.Unique("cohort")}
	// ClusterQueues are cluster-scoped: a unique prefix lets `go test -count=N` run the test again on the same API server.
	prefix := cluster.Unique("load")
	for i := range queues {
		q := fq{flavor: rf, nominal: fmt.Sprint(4 + rng.IntN(8))}
		switch i % 3 {
		case 1:
			q.borrowing = ptr.To(fmt.Sprint(rng.IntN(4)))
		case 2:
			q.lending = ptr.To("2")
		}
		name := fmt.Sprintf("%s-%d", prefix, i)
		cluster.MustCreate(t, clusterQueue(name, cohorts[i%2], q), localQueue(ns, name, name))
	}
	var all []*kueue.Workload
	for i := range workloads {
		all = append(all, newWorkload(ns, fmt.Sprintf("w-%04d", i), fmt.Sprintf("%s-%d", prefix, rng.IntN(queues)),
			int32(rng.IntN(3)), int32(1+rng.IntN(3)), fmt.Sprintf("%dm", 250*(1+rng.IntN(4)))))
	}

	// Sample the invariant while the burst lands.
	ctx, stopSampling := context.WithCancel(context.Background())
	samplerDone := make(chan error, 1)
	samples := 0
	go func() {
		ticker := time.NewTicker(500 * time.Millisecond)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				samplerDone <- nil
				return
			case <-ticker.C:
				samples++
				if err := framework.CheckQuotaInvariant(context.Background(), cluster.Client); err != nil {
					samplerDone <- err
					return
				}
			}
		}
	}()
	var wg sync.WaitGroup
	work := make(chan *kueue.Workload)
	errs := make(chan error, workloads)
	for range creators {
		wg.Go(func() {
			for wl := range work {
				if err := cluster.Client.Create(context.Background(), wl); err != nil {
					errs <- err
				}
			}
		})
	}
	for _, wl := range all {
		work <- wl
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("creating: %v", err)
	}

	// Drain: finish whatever holds quota until everything ran.
	finished := map[string]bool{}
	// A bound on liveness, not a speed claim (make bench measures): about a
	// minute alone on 2 cores, several times that under -race beside other
	// suites, where the last queue's tail drains one or two at a time.
	drain := 4 * time.Minute
	if raceDetector {
		drain = 10 * time.Minute
	}
	deadline := time.Now().Add(drain)
	for len(finished) < workloads {
		if time.Now().After(deadline) {
			list := &kueue.WorkloadList{}
			_ = cluster.Client.List(context.Background(), list, client.InNamespace(ns))
			shown := 0
			for _, wl := range list.Items {
				if !finished[wl.Name] && shown < 5 {
					shown++
					t.Logf("%s (queue %s, rv %s): admission=%v conditions=%v", wl.Name, wl.Spec.QueueName, wl.ResourceVersion, wl.Status.Admission, wl.Status.Conditions)
				}
			}
			t.Fatalf("only %d of %d workloads ran within the deadline", len(finished), workloads)
		}
		var running []kueue.Workload
		framework.Eventually(t, "some workload to hold quota", func(ctx context.Context) (bool, error) {
			list := &kueue.WorkloadList{}
			if err := cluster.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
				return false, err
			}
			running = running[:0]
			for _, wl := range list.Items {
				if reserved(&wl) {
					running = append(running, wl)
				}
			}
			return len(running) > 0, nil
		})
		if err := framework.CheckQuotaInvariant(context.Background(), cluster.Client); err != nil {
			t.Fatal(err)
		}
		for i := range running {
			wl := &running[i]
			if finished[wl.Name] {
				t.Fatalf("%s holds quota again after it finished", wl.Name)
			}
			if meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted) != nil {
				t.Fatalf("%s was evicted: each workload must be admitted exactly once", wl.Name)
			}
			finished[wl.Name] = true
			meta.SetStatusCondition(&wl.Status.Conditions, finishedCondition())
		}
		parallel(t, running, func(wl *kueue.Workload) error { return cluster.Client.Status().Update(context.Background(), wl) })
	}
	stopSampling()
	if err := <-samplerDone; err != nil {
		t.Fatalf("invariant broken during the run: %v", err)
	}
	t.Logf("%d workloads ran; invariant held at %d samples and every drain round", workloads, samples)
}

func finishedCondition() metav1.Condition {
	return metav1.Condition{Type: kueue.WorkloadFinished, Status: "True", Reason: "Succeeded", Message: "done"}
}

func parallel(t *testing.T, wls []kueue.Workload, fn func(*kueue.Workload) error) {
	t.Helper()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	errs := make(chan error, len(wls))
	for i := range wls {
		wg.Add(1)
		sem <- struct{}{}
		go func(wl *kueue.Workload) {
			defer wg.Done()
			defer func() { <-sem }()
			if err := fn(wl); err != nil {
				errs <- fmt.Errorf("%s: %w", wl.Name, err)
			}
		}(&wls[i])
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
