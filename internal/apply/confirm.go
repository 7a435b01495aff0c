package apply

import "time"

// preemptionConfirmer holds a preemption back until it is decided again on
// a view at least a grace newer. A cycle decides on the watch's view of what
// runs, which lags the API server; in the baseline bench, with jobs that
// end every few hundred milliseconds, most victims chosen on that view had
// already finished or were about to, and the quota they gave back would have
// made room anyway. Asking again one grace later costs the preemptor that
// long (it keeps its place meanwhile: nothing behind it takes the room)
// and spares the work of victims that were ending. Only the cycle's
// goroutine uses it.
type preemptionConfirmer struct {
	// wanted is when each preemptor first asked for victims, in its
	// current run of asking.
	wanted map[string]time.Time
}

// confirmWindow is how long after its grace a first wish still confirms a
// preemption: one older than that was not asked again in time (the
// preemptor fitted, or left) and starts over.
const confirmWindow = 10 * time.Second

// confirmed tells whether the preemption key asks for now may be made.
// first says that this is the first time it asks: the caller then arranges
// a cycle after the grace.
func (p *preemptionConfirmer) confirmed(key string, now time.Time, grace time.Duration) (ok, first bool) {
	if grace <= 0 {
		return true, false
	}
	if p.wanted == nil {
		p.wanted = map[string]time.Time{}
	}
	since, asked := p.wanted[key]
	if !asked || expired(since, now, grace) {
		p.wanted[key] = now
		return false, true
	}
	if now.Sub(since) < grace {
		return false, false
	}
	delete(p.wanted, key)
	return true, false
}

// forget drops a preemptor that was admitted or needs no victims now.
func (p *preemptionConfirmer) forget(key string) { delete(p.wanted, key) }

// prune drops the wishes too old to confirm anything (their preemptors
// left the queue).
func (p *preemptionConfirmer) prune(now time.Time, grace time.Duration) {
	for key, since := range p.wanted {
		if expired(since, now, grace) {
			delete(p.wanted, key)
		}
	}
}

// expired tells a first wish too old to confirm a preemption now.
func expired(since, now time.Time, grace time.Duration) bool {
	return now.Sub(since) >= grace+confirmWindow
}
