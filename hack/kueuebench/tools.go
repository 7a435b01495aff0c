//go:build tools

// Package kueuebench pins the Kueue release whose own scheduler benchmark
// `make bench-vs-kueue` builds: the runner and minimalkueue from
// sigs.k8s.io/kueue/test/performance/scheduler. It is a module apart so
// that Kueue and its dependencies are never part of sluice's build; nothing
// here is linked into sluice.
package kueuebench

import (
	_ "sigs.k8s.io/kueue/test/performance/scheduler/minimalkueue"
	_ "sigs.k8s.io/kueue/test/performance/scheduler/runner"
)
