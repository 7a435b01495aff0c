package e2e

import (
	"context"
	"fmt"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// Team A lends its idle quota to team B's Jobs, then submits its own: B's
// borrowing Jobs are suspended and queued again (their pods gone), A's run,
// and B's resume when A's are done. No Job fails because of preemption.
func TestLenderReclaimsItsQuota(t *testing.T) {
	c := sharedClient(t)
	queue := func(team, nominal string, reclaim kueue.PreemptionPolicy) {
		cq := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "e2e-" + team}, Spec: kueue.ClusterQueueSpec{
			CohortName: "e2e-reclaim", NamespaceSelector: &metav1.LabelSelector{},
			Preemption: &kueue.ClusterQueuePreemption{ReclaimWithinCohort: reclaim},
			ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
				Flavors: []kueue.FlavorQuotas{{Name: "on-demand",
					Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse(nominal)}}}}}},
		}}
		for _, o := range []client.Object{
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e-" + team}}, cq,
			&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "e2e-" + team, Name: "lq"}, Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(cq.Name)}},
		} {
			if err := c.Create(t.Context(), o); err != nil {
				t.Fatal(err)
			}
		}
	}
	queue("lender", "4", kueue.PreemptionPolicyAny)
	queue("borrower", "0", kueue.PreemptionPolicyNever)

	var theirs, mine []*batchv1.Job
	for i := range 2 {
		j := queuedJob("e2e-borrower", fmt.Sprintf("theirs-%d", i), 2, "10s")
		if err := c.Create(t.Context(), j); err != nil {
			t.Fatal(err)
		}
		theirs = append(theirs, j)
	}
	eventually(t, "team B's Jobs to run on team A's idle quota", func(ctx context.Context) (bool, error) {
		return allJobs(ctx, c, theirs, func(j *batchv1.Job) bool { return j.Status.Active == 2 })
	})
	for i := range 2 {
		j := queuedJob("e2e-lender", fmt.Sprintf("mine-%d", i), 2, "3s")
		if err := c.Create(t.Context(), j); err != nil {
			t.Fatal(err)
		}
		mine = append(mine, j)
	}
	eventually(t, "team B's Jobs to be suspended with their pods gone", func(ctx context.Context) (bool, error) {
		return allJobs(ctx, c, theirs, func(j *batchv1.Job) bool { return ptr.Deref(j.Spec.Suspend, false) && j.Status.Active == 0 })
	})
	eventually(t, "team A's Jobs to complete", func(ctx context.Context) (bool, error) {
		return allJobs(ctx, c, mine, func(j *batchv1.Job) bool { return hasCondition(j.Status.Conditions, batchv1.JobComplete) })
	})
	eventually(t, "team B's Jobs to resume and complete", func(ctx context.Context) (bool, error) {
		return allJobs(ctx, c, theirs, func(j *batchv1.Job) bool { return hasCondition(j.Status.Conditions, batchv1.JobComplete) })
	})
}

// allJobs reads the Jobs and tells whether all satisfy cond; a failed Job
// fails the test.
func allJobs(ctx context.Context, c client.Client, jobs []*batchv1.Job, cond func(*batchv1.Job) bool) (bool, error) {
	all := true
	for _, j := range jobs {
		if err := c.Get(ctx, client.ObjectKeyFromObject(j), j); err != nil {
			return false, err
		}
		if failed, msg := jobFailed(j); failed {
			return false, fmt.Errorf("job %s failed: %s", j.Name, msg)
		}
		all = all && cond(j)
	}
	return all, nil
}
