// Package quota owns the quota tree: Cohorts and ClusterQueues as nodes, their
// parent links, and (with the admission issue) flavor x resource arithmetic.
// It is pure: no API calls, no clocks, no logging. Controllers feed it
// snapshots; the scheduler asks it questions.
package quota
