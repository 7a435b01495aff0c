// Package apply turns the decision core's verdicts into API writes and owns
// the state those writes are in flight through. It holds the Tracker (the
// one owner of which workloads wait, hold quota, or have an admission or
// preemption on its way), the Admitter (the cycle loop: snapshot,
// internal/scheduler decides, writes queued), and the Dispatcher (the one
// write path: one write per object at a time, merged intents, bounded
// workers, per-object backoff, fenced on the lease). It decides nothing
// about admission itself, and reads the cluster only through the clients it
// is given.
//
// A workload's admission state, and who moves it (transitions in tracker.go):
//
//	           watch: active, no reservation
//	(absent) ─────────────────────────────────► pending ◄───────────────┐
//	                                              │ cycle admits         │
//	                                              ▼ (charged)            │
//	                                           assumed                   │
//	              write accepted ┌───────────────┼───────────────┐ 4xx   │
//	                             ▼               │ no answer     ▼       │
//	                          landed             ▼            refused ───┤ read or
//	                             │           uncertain ──────────────────┤ watch: no
//	      watch: reserved        │ (charged until a read or the watch)   │ reservation
//	                             ▼               │                       │
//	                         reserved ◄──────────┘ read or watch:        │
//	                             │                 reserved              │
//	                             │ cycle preempts / reconciler evicts    │
//	                             ▼                                       │
//	                         evicting ───────────────────────────────────┘
//	                             │ watch: finished or deleted (and, for a
//	                             ▼ job's Workload, its job let go)
//	                         (absent)
//
// Pending, reserved and evicting are what the watch shows; assumed, landed,
// uncertain and refused exist only here, each remembering the version the
// admission was decided on: the watch delivering that version again says
// nothing new, any other version is the truth. Quota is charged from
// assumed until the watch (or a read) shows the reservation gone, except
// when the API refused the write.
package apply
