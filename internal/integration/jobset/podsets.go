// Package jobset is the JobSet kind (jobset.x-k8s.io/v1alpha2) of the job
// framework: one pod set per replicated Job, suspended and resumed through
// spec.suspend, the flavors injected into each replicated Job's pod
// template, and its webhook rules. Its child Jobs are its own: the Job
// integration leaves them alone (unless one opts in with standalone while
// the JobSet is not queued). It must not own the Workload lifecycle
// (internal/integration does).
package jobset

import (
	"fmt"
	"math"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration/job"
)

// maxPodSets is the most pod sets a Workload holds (its API's limit).
const maxPodSets = 8

// replicas is how many Jobs a replicated Job runs (JobSet's default is 1).
func replicas(rj *jobsetapi.ReplicatedJob) int32 {
	if rj.Replicas == 0 {
		return 1
	}
	return rj.Replicas
}

// podsPerJob is how many pods each Job of a replicated Job runs at once.
func podsPerJob(rj *jobsetapi.ReplicatedJob) int32 {
	return job.Count(&batchv1.Job{Spec: rj.Template.Spec})
}

// PodSets are the JobSet's pod sets, one per replicated Job, named after
// it, counting its replicas' pods. Counts that don't fit a pod set, and
// more replicated Jobs than a Workload holds, are errors naming the field.
func PodSets(js *jobsetapi.JobSet) ([]kueue.PodSet, field.ErrorList) {
	errs := validatePodSets(js)
	if len(errs) > 0 {
		return nil, errs
	}
	podSets := make([]kueue.PodSet, 0, len(js.Spec.ReplicatedJobs))
	for i := range js.Spec.ReplicatedJobs {
		rj := &js.Spec.ReplicatedJobs[i]
		podSets = append(podSets, kueue.PodSet{
			Name:     kueue.PodSetReference(rj.Name),
			Count:    replicas(rj) * podsPerJob(rj),
			Template: *rj.Template.Spec.Template.DeepCopy(),
		})
	}
	return podSets, nil
}

// validatePodSets checks what PodSets needs: at least one and at most
// maxPodSets replicated Jobs, names that are pod-set names, counts that are
// positive and fit.
func validatePodSets(js *jobsetapi.JobSet) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("spec", "replicatedJobs")
	switch n := len(js.Spec.ReplicatedJobs); {
	case n == 0:
		errs = append(errs, field.Required(path, "a queued JobSet needs at least one replicated Job"))
	case n > maxPodSets:
		errs = append(errs, field.TooMany(path, n, maxPodSets))
	}
	for i := range js.Spec.ReplicatedJobs {
		rj := &js.Spec.ReplicatedJobs[i]
		p := path.Index(i)
		for _, msg := range validation.IsDNS1123Label(rj.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), rj.Name, "must be a pod-set name: "+msg))
		}
		if rj.Replicas < 0 {
			errs = append(errs, field.Invalid(p.Child("replicas"), rj.Replicas, "must not be negative"))
			continue
		}
		perJob := podsPerJob(rj)
		if perJob < 1 {
			errs = append(errs, field.Invalid(p.Child("template", "spec", "parallelism"), perJob, "must be at least 1 for a queued JobSet"))
			continue
		}
		if int64(replicas(rj))*int64(perJob) > math.MaxInt32 {
			errs = append(errs, field.Invalid(p.Child("replicas"), rj.Replicas,
				fmt.Sprintf("replicas times the Job's pods (%d) must not exceed %d", perJob, math.MaxInt32)))
		}
	}
	return errs
}
