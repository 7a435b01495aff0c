package jobset

import (
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/sluicehq/sluice/internal/integration"
	"github.com/sluicehq/sluice/internal/integration/job"
)

// makes is the JobSet's Makes: a Job is the JobSet's when it is named as
// the JobSet controller names the Jobs of a replicated Job
// (<jobset>-<replicated job>-<index>, index below its replicas) and runs
// no more pods, asking for no more, than that replicated Job's template.
func makes(parent, child client.Object) bool {
	js, ok := parent.(*jobsetapi.JobSet)
	j, isJob := child.(*batchv1.Job)
	if !ok || !isJob {
		return false
	}
	rj := replicatedJobNamed(js, j.Name)
	return rj != nil && job.Count(j) <= podsPerJob(rj) &&
		integration.SamePodRequests(&j.Spec.Template.Spec, &rj.Template.Spec.Template.Spec)
}

// replicatedJobNamed is the replicated Job whose replica name is the Job
// name, or nil.
func replicatedJobNamed(js *jobsetapi.JobSet, name string) *jobsetapi.ReplicatedJob {
	for i := range js.Spec.ReplicatedJobs {
		rj := &js.Spec.ReplicatedJobs[i]
		index, ok := strings.CutPrefix(name, js.Name+"-"+rj.Name+"-")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(index, 10, 32); err == nil && strconv.FormatInt(n, 10) == index && n >= 0 && int32(n) < replicas(rj) {
			return rj
		}
	}
	return nil
}
