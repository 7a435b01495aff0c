package apply

import (
	"cmp"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/quota"
	"github.com/sluicehq/sluice/internal/workload"
)

// This file holds the admissions in flight: decided here, charged, and not
// yet shown by the watch. Every move of one happens under the Tracker's
// lock, and each names the admission it is about (its AdmissionID): an
// answer, or a read, that belongs to an earlier admission of the same
// workload never touches a later one. docs/reliability.md lists the
// interleavings this guards against.

// AdmissionID names one decided admission of a workload; a workload
// admitted again (after its first write was refused) gets a new one.
type AdmissionID uint64

// phase is where a decided admission stands.
type phase int

const (
	// assumed: decided and charged; the write is queued or in flight.
	assumed phase = iota + 1
	// landed: written; charged until the watch shows the reservation.
	landed
	// uncertain: the write failed without saying whether it landed
	// (timeout, lost connection): charged, so the quota is never given
	// twice, until a read or the watch tells.
	uncertain
	// refused: the API refused the write: not charged; a read or the watch
	// queues it again.
	refused
)

func (p phase) String() string {
	return [...]string{"", "assumed", "landed", "uncertain", "refused"}[p]
}

// flight is a decided admission: its phase, and the version it was decided
// on (the watch delivering that version again says nothing new).
type flight struct {
	id    AdmissionID
	phase phase
	base  string
	// written is the version the admission produced, once it landed.
	written string
	// sentOn is the version an uncertain admission was conditional on
	// (our own pending verdict's, or the decided one): no version up to
	// it tells whether the admission landed.
	sentOn string
	// newest is the newest version the watch delivered while the write
	// was in flight (assumed), when the outcome decides how to read it:
	// it is applied once the outcome is known. Without it, a watch that
	// beats the write's answer would leave the admission landed until
	// some later event, and blockAdmission waiting for it.
	newest *kueue.Workload
}

// Assume charges a decided admission and takes the workload out of the
// queues: assumed. The id it returns names this admission to the write's
// outcome and to the read that may settle it.
func (t *Tracker) Assume(info *workload.Info, clusterQueue string, usage quota.Amounts, now time.Time) AdmissionID {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lastAdmission++
	id := t.lastAdmission
	t.flights[info.Key] = flight{id: id, phase: assumed, base: info.Obj.ResourceVersion}
	t.Cache.Assume(info, clusterQueue, usage, now)
	t.Queues.Delete(info.Key)
	return id
}

// Landed records that admission id's write was accepted, producing
// version written: assumed -> landed.
func (t *Tracker) Landed(key string, id AdmissionID, written string) {
	t.outcome(key, id, func(f *flight) (release bool) {
		f.phase, f.written = landed, written
		return false
	})
}

// Uncertain records that admission id's write, conditional on version
// sentOn, has an unknown outcome: assumed -> uncertain. The quota stays
// charged until a version newer than sentOn, or a read, tells.
func (t *Tracker) Uncertain(key string, id AdmissionID, sentOn string) {
	t.outcome(key, id, func(f *flight) (release bool) {
		f.phase, f.sentOn = uncertain, sentOn
		return false
	})
}

// Refused records that the API refused admission id's write: assumed ->
// refused, and the quota is given back.
func (t *Tracker) Refused(key string, id AdmissionID) {
	t.outcome(key, id, func(f *flight) (release bool) {
		f.phase = refused
		return true
	})
}

// outcome files a write's outcome for admission id, if it is still the
// workload's admission in flight: move sets the new phase and says whether
// the charge goes. The move, the release and the version the watch
// delivered meanwhile are applied in one hold of the lock: released outside
// it, a watch event and a new admission of the same workload could come in
// between and lose the new admission's charge.
func (t *Tracker) outcome(key string, id AdmissionID, move func(*flight) (release bool)) {
	t.mu.Lock()
	f, ok := t.flights[key]
	if !ok || f.id != id || f.phase != assumed {
		t.mu.Unlock()
		return
	}
	release := move(&f)
	newest := f.newest
	f.newest = nil
	t.flights[key] = f
	var freed []string
	if release {
		freed = append(freed, t.Cache.Release(key))
	}
	if newest != nil {
		freed = append(freed, t.observeLocked(key, newest))
	}
	t.mu.Unlock()
	t.afterUnlock("outcome")
	for _, cq := range freed {
		t.quotaFreed(cq)
	}
}

// Unsettled tells whether admission id of the workload is uncertain or
// refused: a read of it from the API settles it. Once the watch settled
// it, or the workload was admitted again, the read is not needed.
func (t *Tracker) Unsettled(key string, id AdmissionID) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.unsettled(key, id)
	return ok
}

func (t *Tracker) unsettled(key string, id AdmissionID) (flight, bool) {
	f, ok := t.flights[key]
	return f, ok && f.id == id && (f.phase == uncertain || f.phase == refused)
}

// Phase is where a decided admission stands ("" when none is).
func (t *Tracker) Phase(key string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if f, ok := t.flights[key]; ok {
		return f.phase.String()
	}
	return ""
}

// Observe applies a version of a Workload delivered by the watch. While an
// admission of it is in flight, the write's outcome decides; the version it
// was decided on says nothing new. Any other version is the truth.
func (t *Tracker) Observe(wl *kueue.Workload) {
	t.written.seen(wl)
	t.mu.Lock()
	freed := t.observeLocked(workload.Key(wl), wl)
	t.mu.Unlock()
	t.quotaFreed(freed)
}

// observeLocked is Observe under mu.
func (t *Tracker) observeLocked(key string, wl *kueue.Workload) (freed string) {
	if t.older(key, wl) {
		return ""
	}
	if f, ok := t.flights[key]; ok {
		if f.phase == assumed {
			if f.newest == nil || !t.olderThan(wl, f.newest.ResourceVersion) {
				f.newest = wl
				t.flights[key] = f
			}
			return ""
		}
		if wl.ResourceVersion == f.base || (f.phase == landed && beforeAdmission(wl, f.written)) ||
			(f.phase == uncertain && notNewer(wl.ResourceVersion, f.sentOn)) {
			return ""
		}
		t.endFlight(key)
	}
	return t.settle(key, wl)
}

// endFlight drops an admission in flight; the last one wakes the
// admitter: what blockAdmission waited for may be over. The caller holds
// mu.
func (t *Tracker) endFlight(key string) {
	delete(t.flights, key)
	if len(t.flights) == 0 {
		t.Queues.Signal()
	}
}

// older tells a version of a workload older than the one the queues and
// the cache last settled on: a read that took long, or an informer that
// lags a fresh list. It says nothing now; settling it would bring back a
// state that is over (a reservation that finished, say). The caller holds
// mu.
func (t *Tracker) older(key string, wl *kueue.Workload) bool {
	applied, ok := t.applied[key]
	return ok && t.olderThan(wl, applied)
}

func (t *Tracker) olderThan(wl *kueue.Workload, version string) bool {
	order, ok := compareVersions(wl.ResourceVersion, version)
	return ok && order < 0
}

// beforeAdmission tells a version of a workload whose admission landed
// (producing version written) that the watch delivers late: one from
// before the admission (a pending verdict of ours written on top of the
// decided version, say). Settling it would give the quota back while the
// admission holds it, and the room would be admitted twice until the
// admission's own event came. Resource versions are etcd revisions here,
// so an older one is a smaller number; were they not numbers, a version
// that shows no reservation and nothing that ends one is taken as older.
func beforeAdmission(wl *kueue.Workload, written string) bool {
	if order, ok := compareVersions(wl.ResourceVersion, written); ok {
		return order < 0
	}
	return !workload.HasQuotaReservation(wl) && !workload.IsFinished(wl) && wl.DeletionTimestamp.IsZero() &&
		!meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted)
}

// notNewer tells a version the watch delivers that is not newer than the
// one an uncertain admission was conditional on: it was there before the
// write and says nothing of its outcome (settling it, were it pending,
// would give back quota the admission may hold). Versions that are not
// numbers are taken as news.
func notNewer(seen, sentOn string) bool {
	order, ok := compareVersions(seen, sentOn)
	return ok && order <= 0
}

// compareVersions orders two resource versions as the etcd revisions they
// are here (-1, 0, 1); ok is false when either is not a number.
func compareVersions(a, b string) (order int, ok bool) {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	if errA != nil || errB != nil {
		return 0, false
	}
	return cmp.Compare(x, y), true
}

// Resolve applies a version read from the API server to settle admission
// id, uncertain or refused: it is the truth, whatever its version. A read
// that comes back after the watch settled the admission, or after the
// workload was admitted again, is dropped: it may be older than what the
// watch showed since, and it is not about the admission in flight now.
func (t *Tracker) Resolve(wl *kueue.Workload, id AdmissionID) {
	key := workload.Key(wl)
	t.mu.Lock()
	if _, ok := t.unsettled(key, id); !ok || t.older(key, wl) {
		t.mu.Unlock()
		return
	}
	t.endFlight(key)
	freed := t.settle(key, wl)
	t.mu.Unlock()
	t.quotaFreed(freed)
}

// Gone settles admission id, uncertain or refused, whose read found no
// Workload: it is forgotten, unless the watch settled it first or it was
// admitted again (a Workload of the same name created since).
func (t *Tracker) Gone(key string, id AdmissionID) {
	t.mu.Lock()
	if _, ok := t.unsettled(key, id); !ok {
		t.mu.Unlock()
		return
	}
	delete(t.applied, key)
	freed := t.forgetLocked(key)
	t.mu.Unlock()
	t.quotaFreed(freed)
}

// afterUnlock runs the test hook at a point where an operation released
// the lock with work left: the only points where another operation can
// interleave with it.
func (t *Tracker) afterUnlock(op string) {
	if t.interleave != nil {
		t.interleave(op)
	}
}
