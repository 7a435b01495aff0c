//go:build tools

// Package kueuebench pins the Kueue release whose own tools sluice runs
// against itself: the runner and minimalkueue of its scheduler benchmark
// (`make bench-vs-kueue`), and its kubectl plugin, kueuectl, which the e2e
// tests run against sluice's visibility API. It is a module apart so
// that Kueue and its dependencies are never part of sluice's build; nothing
// here is linked into sluice.
package kueuebench

import (
	_ "sigs.k8s.io/kueue/cmd/kueuectl"
	_ "sigs.k8s.io/kueue/test/performance/scheduler/minimalkueue"
	_ "sigs.k8s.io/kueue/test/performance/scheduler/runner"
)
