// Package controller owns the reconcilers of the queueing objects: the
// finalizers that keep referenced objects alive, the Active conditions of
// ClusterQueues and LocalQueues, and feeding every change of a queue,
// cohort, flavor, namespace or Workload to admission's state
// (internal/apply.Tracker). The WorkloadReconciler also runs the second
// phase of admission: admission check states to Admitted, Retry and
// Rejected to eviction, backoff and deactivation, and waitForPodsReady's
// timeouts (twophase.go); the checks themselves are their controllers'
// (internal/controller/provisioning for ProvisioningRequests). Reconcilers read from the manager's cache and
// write only when a verdict changes. Admission decisions are
// internal/scheduler's and their writes internal/apply's; Setup wires the
// three together.
package controller
