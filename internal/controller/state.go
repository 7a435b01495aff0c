package controller

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/cache"
	"github.com/sluicehq/sluice/internal/queue"
	"github.com/sluicehq/sluice/internal/quota"
	"github.com/sluicehq/sluice/internal/workload"
)

// State is what the reconcilers feed and the scheduler loop reads: the
// admission cache and the pending queues. Changes that may let a parked
// workload fit (a queue, cohort, flavor or namespace changed) requeue the
// parked workloads; repeated events with nothing new do not.
type State struct {
	Cache  *cache.Cache
	Queues *queue.Queues

	mu   sync.Mutex
	seen map[string]string // object kind/name -> what was last fed

	// admission serializes the two moves of a workload between the queues
	// and the cache: the scheduler assuming an admission (and dequeuing),
	// and the reconciler seeing it pending (releasing and enqueuing).
	// Interleaved, the reconciler could release an admission the scheduler
	// had just assumed, and quota would look free while the write lands.
	admission sync.Mutex

	// written are the scheduler's status writes the watch hasn't delivered.
	written *ownWrites
}

// NewState makes an empty State.
func NewState() *State {
	return &State{Cache: cache.New(), Queues: queue.New(), seen: map[string]string{}, written: newOwnWrites()}
}

// changed records a version of what was fed for an object and tells whether
// it differs from the last one.
func (s *State) changed(key, version string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[key] == version {
		return false
	}
	s.seen[key] = version
	return true
}

// forget drops what was fed for a deleted object, and requeues the parked
// workloads: an object created again under the same name is new, even at
// the same generation, and what waited for it may fit now.
func (s *State) forget(key string) {
	s.mu.Lock()
	delete(s.seen, key)
	s.mu.Unlock()
	s.Queues.RequeueParked(nil)
}

// specVersion identifies a version of an object's spec: its UID (an object
// deleted and created again starts at generation 1 again) and generation.
func specVersion(uid types.UID, generation int64) string {
	return string(uid) + "/" + strconv.FormatInt(generation, 10) + "/"
}

func labelsVersion(l map[string]string) string {
	keys := slices.Sorted(maps.Keys(l))
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + l[k] + ",")
	}
	return b.String()
}

func (s *State) setClusterQueue(cq *kueue.ClusterQueue, active metav1.Condition) {
	s.Cache.SetClusterQueue(cq, active.Status == metav1.ConditionTrue, active.Message)
	if s.changed("cq/"+cq.Name, specVersion(cq.UID, cq.Generation)+string(active.Status)+active.Message) {
		s.Queues.RequeueParked(nil)
	}
}

func (s *State) deleteClusterQueue(name string) {
	s.Cache.DeleteClusterQueue(name)
	s.forget("cq/" + name)
}

func (s *State) deleteLocalQueue(key string) {
	s.Cache.DeleteLocalQueue(key)
	s.forget("lq/" + key)
}

func (s *State) deleteCohort(name string) {
	s.Cache.DeleteCohort(name)
	s.forget("cohort/" + name)
}

func (s *State) deleteFlavor(name string) {
	s.Cache.DeleteFlavor(name)
	s.forget("rf/" + name)
}

func (s *State) deleteNamespace(name string) {
	s.Cache.DeleteNamespace(name)
	s.forget("ns/" + name)
}

func (s *State) setLocalQueue(lq *kueue.LocalQueue) {
	s.Cache.SetLocalQueue(lq)
	if s.changed("lq/"+lq.Namespace+"/"+lq.Name, specVersion(lq.UID, lq.Generation)) {
		s.Queues.RequeueParked(nil)
	}
}

func (s *State) setCohort(co *kueue.Cohort) {
	s.Cache.SetCohort(co)
	if s.changed("cohort/"+co.Name, specVersion(co.UID, co.Generation)) {
		s.Queues.RequeueParked(nil)
	}
}

func (s *State) setFlavor(rf *kueue.ResourceFlavor) {
	s.Cache.SetFlavor(rf)
	if s.changed("rf/"+rf.Name, specVersion(rf.UID, rf.Generation)) {
		s.Queues.RequeueParked(nil)
	}
}

func (s *State) setNamespace(name string, labels map[string]string) {
	s.Cache.SetNamespace(name, labels)
	// Namespace labels are their version; a namespace created again under
	// the same name was forgotten on delete, so its labels count as new.
	if s.changed("ns/"+name, labelsVersion(labels)) {
		s.Queues.RequeueParked(nil)
	}
}

// quotaFreed wakes the parked workloads that share quota with a
// ClusterQueue that got some back.
func (s *State) quotaFreed(clusterQueue string) {
	if clusterQueue == "" {
		return
	}
	members := s.Cache.CohortMembers(clusterQueue)
	s.Queues.RequeueParked(func(info *workload.Info) bool {
		lq, ok := s.Cache.LocalQueue(info.Namespace + "/" + info.LocalQueue)
		return ok && members[string(lq.Spec.ClusterQueue)]
	})
}

// assume charges a decided admission and takes the workload out of the
// queues, atomically with respect to setPending.
func (s *State) assume(info *workload.Info, clusterQueue string, usage quota.Amounts, now time.Time) {
	s.admission.Lock()
	defer s.admission.Unlock()
	s.Cache.Assume(info, clusterQueue, usage, now)
	s.Queues.Delete(info.Key)
}

// setPending records that a workload holds no reservation: it gives back any
// quota it held and queues it (or, inactive, keeps it out). A workload whose
// admission is assumed is left alone: the write in flight decides.
func (s *State) setPending(info *workload.Info, active bool) {
	s.admission.Lock()
	if s.Cache.IsAssumed(info.Key) {
		s.admission.Unlock()
		return
	}
	freed := s.Cache.Release(info.Key)
	if active {
		s.Queues.AddOrUpdate(info)
	} else {
		s.Queues.Delete(info.Key)
	}
	s.admission.Unlock()
	s.quotaFreed(freed)
}
