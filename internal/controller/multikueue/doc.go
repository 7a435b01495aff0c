// Package multikueue runs MultiKueue on the manager cluster: it connects
// to the worker clusters that MultiKueueClusters describe, keeps the
// Active condition of those clusters and of the MultiKueue
// AdmissionChecks, dispatches each Workload whose quota is reserved here
// to the workers, mirrors the winning worker's job status back, and
// garbage-collects the remote objects it made.
//
// It owns the connections to worker clusters and everything it writes
// there. It never admits or evicts a Workload here itself: it only sets
// its admission check's state (and clusterName), and the two-phase
// admission of package controller acts on it. What a job kind must
// provide to be dispatched is integration.RemoteAdapter.
package multikueue
