// Package integration is the job framework: what every queued kind (batch
// Jobs, Pods, pod groups, Deployments...) has in common with the others. A
// kind supplies how to read its pod sets, suspend, run with injected pod-set
// information and restore it; the framework owns the Workload's name and
// the injection and restoration of what admission decided. This package is
// pure so far (the reconciler that drives a kind arrives with the batch/v1
// Job integration); it must not know any kind by name.
package integration
