// Package dashboard serves sluice's web dashboard: the cohort tree with
// each ClusterQueue's quota per flavor and resource as bars, the pending
// workloads of each queue with their position and reason, and the recent
// admissions and evictions. The page is rendered on the server from
// informers (watch-driven) and pushed to open pages as it changes
// (server-sent events); its assets are embedded. It only reads the
// cluster: the queues, the workloads and the visibility API.
package dashboard
