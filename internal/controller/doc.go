// Package controller owns the reconcilers of the queueing objects: the
// finalizers that keep referenced objects alive and the Active conditions of
// ClusterQueues and LocalQueues. Reconcilers read from the manager's cache and
// write only when a verdict changes. Decisions about admitting workloads do
// not belong here (internal/scheduler makes them); this package applies them.
package controller
