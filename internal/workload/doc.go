// Package workload turns a Workload object into what admission needs: the
// effective request of its pods, its priority and queue time, and its
// requirement shape; and reads and writes (in memory) its lifecycle: the
// conditions, admission check states, PodsReady and backoff. It is pure:
// it never talks to the API server.
package workload
