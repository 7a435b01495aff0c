// Package quota owns the quota tree: Cohorts and ClusterQueues as nodes, their
// parent links, flavor x resource arithmetic (what a node may use, borrow and
// lend) and fair-sharing shares.
// It is pure: no API calls, no clocks, no logging. Controllers feed it
// snapshots; the scheduler asks it questions.
package quota
