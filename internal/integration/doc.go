// Package integration is the job framework: what every queued kind (batch
// Jobs, Pods, pod groups, Deployments...) has in common with the others. A
// kind supplies how to read its pod sets, suspend (or be deleted), run with
// injected pod-set information and restore it; the framework owns the
// Workload's name and lifecycle (Reconciler), which objects are queued
// (Policy), and the injection and restoration of what admission decided. It
// must not know any kind by name; the kinds live in its subpackages.
package integration
