// Package job is the batch/v1 Job kind of the job framework: how a Job's pod
// sets are read from its spec, how it is suspended, started with injected
// pod-set information and restored, and its webhook. It must not own the
// Workload's lifecycle (internal/integration does).
package job

import (
	"fmt"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// PodSetName is the one pod set of a Job.
const PodSetName kueue.PodSetReference = "main"

// Count is how many pods of the Job run at once: parallelism (default 1),
// no more than its completions.
func Count(job *batchv1.Job) int32 {
	count := int32(1)
	if job.Spec.Parallelism != nil {
		count = *job.Spec.Parallelism
	}
	if job.Spec.Completions != nil && *job.Spec.Completions < count {
		count = *job.Spec.Completions
	}
	return count
}

// MinCount reads kueue.x-k8s.io/job-min-parallelism (partial admission):
// absent is nil; otherwise it must be an integer from 1 to the count.
func MinCount(job *batchv1.Job) (*int32, *field.Error) {
	value, ok := job.Annotations[kueue.JobMinParallelismAnno]
	if !ok {
		return nil, nil
	}
	path := field.NewPath("metadata", "annotations").Key(kueue.JobMinParallelismAnno)
	n, err := strconv.ParseInt(value, 10, 32)
	if err != nil {
		return nil, field.Invalid(path, value, "must be an integer")
	}
	count := Count(job)
	if n < 1 || int32(n) > count {
		return nil, field.Invalid(path, value, fmt.Sprintf("must be between 1 and the Job's parallelism (%d)", count))
	}
	minCount := int32(n)
	return &minCount, nil
}

// PodSets is the Job's one pod set, as its Workload lists it.
func PodSets(job *batchv1.Job) ([]kueue.PodSet, *field.Error) {
	minCount, err := MinCount(job)
	if err != nil {
		return nil, err
	}
	return []kueue.PodSet{{
		Name:     PodSetName,
		Count:    Count(job),
		MinCount: minCount,
		Template: *job.Spec.Template.DeepCopy(),
	}}, nil
}
