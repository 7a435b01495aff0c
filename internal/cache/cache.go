// Package cache holds what admission knows about the cluster: the queues,
// cohorts, flavors and namespaces, and the quota every admitted (or
// assumed) workload holds. Reconcilers feed it; the scheduler loop reads a
// fresh Snapshot from it each cycle. It makes no API calls.
package cache

import (
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/quota"
	"github.com/sluicehq/sluice/internal/scheduler"
	"github.com/sluicehq/sluice/internal/workload"
)

// Cache is safe for concurrent use.
type Cache struct {
	mu            sync.RWMutex
	clusterQueues map[string]*clusterQueue
	cohorts       map[string]*kueue.Cohort
	flavors       map[string]*kueue.ResourceFlavor
	localQueues   map[string]*kueue.LocalQueue
	namespaces    map[string]labels.Set
	workloads     map[string]*reservation
	// usageByQueue is the sum of the reservations of each ClusterQueue,
	// kept as they change: a snapshot charges one total per queue instead of
	// every admitted workload.
	usageByQueue map[string]quota.Amounts
	// fairSharing is the manager's configuration, nil when off.
	fairSharing *scheduler.FairSharing
}

type clusterQueue struct {
	obj             *kueue.ClusterQueue
	active          bool
	inactiveMessage string
	// limits and template (the scheduler's view without the quota node)
	// are built once per version of the queue; snapshots share them
	// read-only. Rebuilding them every cycle, selectors included, was most
	// of a snapshot's cost with a thousand queues.
	limits   map[quota.FlavorResource]quota.Limits
	template *scheduler.ClusterQueue
}

// reservation is the quota a workload holds.
type reservation struct {
	clusterQueue string
	localQueue   string // namespace/name
	usage        quota.Amounts
	admitted     bool
	// What preemption needs to know of it.
	priority   int32
	queueTime  time.Time
	admittedAt time.Time
	// evicting: told to stop (Evicted=True, or a preemption decided and not
	// yet seen written); its quota is on its way back and it is no
	// preemption candidate.
	evicting bool
	// candidate is what the scheduler sees of it as a preemption candidate,
	// made once as it is stored: a reservation is replaced, never changed
	// (but evicting), and the scheduler only reads candidates.
	candidate *scheduler.Candidate
}

// New makes an empty Cache.
func New() *Cache {
	return &Cache{
		clusterQueues: map[string]*clusterQueue{},
		cohorts:       map[string]*kueue.Cohort{},
		flavors:       map[string]*kueue.ResourceFlavor{},
		localQueues:   map[string]*kueue.LocalQueue{},
		namespaces:    map[string]labels.Set{},
		workloads:     map[string]*reservation{},
		usageByQueue:  map[string]quota.Amounts{},
	}
}

// SetFairSharing turns fair sharing on (nil: off) for the next snapshots.
func (c *Cache) SetFairSharing(fs *scheduler.FairSharing) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fairSharing = fs
}

// The setters keep copies: callers go on writing to their objects (a status
// patch decodes the server's answer into them) while snapshots read ours.

// SetClusterQueue records a ClusterQueue and its Active verdict.
func (c *Cache) SetClusterQueue(cq *kueue.ClusterQueue, active bool, inactiveMessage string) {
	cq = cq.DeepCopy()
	c.mu.Lock()
	defer c.mu.Unlock()
	entry := &clusterQueue{obj: cq, active: active, inactiveMessage: inactiveMessage, limits: limitsOf(cq.Spec.ResourceGroups)}
	entry.template = schedulerQueue(entry)
	c.clusterQueues[cq.Name] = entry
}

// DeleteClusterQueue forgets a ClusterQueue.
func (c *Cache) DeleteClusterQueue(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.clusterQueues, name)
}

// SetCohort records a Cohort.
func (c *Cache) SetCohort(co *kueue.Cohort) {
	co = co.DeepCopy()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cohorts[co.Name] = co
}

// DeleteCohort forgets a Cohort (it becomes implicit if queues name it).
func (c *Cache) DeleteCohort(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.cohorts, name)
}

// SetFlavor records a ResourceFlavor.
func (c *Cache) SetFlavor(rf *kueue.ResourceFlavor) {
	rf = rf.DeepCopy()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.flavors[rf.Name] = rf
}

// DeleteFlavor forgets a ResourceFlavor.
func (c *Cache) DeleteFlavor(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.flavors, name)
}

// SetLocalQueue records a LocalQueue.
func (c *Cache) SetLocalQueue(lq *kueue.LocalQueue) {
	lq = lq.DeepCopy()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.localQueues[lq.Namespace+"/"+lq.Name] = lq
}

// DeleteLocalQueue forgets a LocalQueue.
func (c *Cache) DeleteLocalQueue(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.localQueues, key)
}

// SetNamespace records a namespace's labels.
func (c *Cache) SetNamespace(name string, l map[string]string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.namespaces[name] = labels.Set(maps.Clone(l))
}

// DeleteNamespace forgets a namespace.
func (c *Cache) DeleteNamespace(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.namespaces, name)
}

// SetReserved records the quota reservation a Workload's status holds,
// replacing what was assumed for it; preempting says a preemption of it was
// decided and is not yet seen written. It returns the ClusterQueue whose
// usage changed, or "".
func (c *Cache) SetReserved(wl *kueue.Workload, preempting bool) string {
	adm := wl.Status.Admission
	r := &reservation{
		clusterQueue: string(adm.ClusterQueue),
		localQueue:   wl.Namespace + "/" + string(wl.Spec.QueueName),
		usage:        UsageOf(wl),
		admitted:     workload.IsAdmitted(wl),
		queueTime:    workload.QueueTime(wl),
		evicting:     preempting || workload.IsEvicting(wl),
	}
	if wl.Spec.Priority != nil {
		r.priority = *wl.Spec.Priority
	}
	if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved); c != nil {
		r.admittedAt = c.LastTransitionTime.Time
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.workloads[workload.Key(wl)]
	c.replaceReservation(workload.Key(wl), old, r)
	if old != nil && old.clusterQueue == r.clusterQueue && equalAmounts(old.usage, r.usage) {
		return ""
	}
	return r.clusterQueue
}

// Assume charges a decided admission before it is written, so the next
// cycle does not admit beyond quota while the write is in flight.
// admittedAt is the decision's time (by the caller's clock: the cache reads
// none), which orders victims until the written condition replaces it.
func (c *Cache) Assume(info *workload.Info, clusterQueue string, usage quota.Amounts, admittedAt time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.replaceReservation(info.Key, c.workloads[info.Key], &reservation{
		clusterQueue: clusterQueue,
		localQueue:   info.Namespace + "/" + info.LocalQueue,
		usage:        usage,
		admitted:     true,
		priority:     info.Priority,
		queueTime:    info.QueueTime,
		admittedAt:   admittedAt,
	})
}

// SetEvicting marks a workload that a preemption decided to evict, so that
// no later cycle picks it again or counts its quota as staying; false undoes
// it for a preemption given up (the workload runs on).
func (c *Cache) SetEvicting(key string, evicting bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.workloads[key]; ok {
		r.evicting = evicting
	}
}

// replaceReservation swaps a workload's reservation (old and r may be nil)
// and keeps the queues' totals. The caller holds the lock.
func (c *Cache) replaceReservation(key string, old, r *reservation) {
	if old != nil {
		if total := c.usageByQueue[old.clusterQueue]; total != nil {
			total.Sub(old.usage)
			if len(total) == 0 {
				delete(c.usageByQueue, old.clusterQueue)
			}
		}
		delete(c.workloads, key)
	}
	if r != nil {
		r.candidate = &scheduler.Candidate{Key: key, ClusterQueue: r.clusterQueue,
			Priority: r.priority, QueueTime: r.queueTime, AdmittedAt: r.admittedAt, Usage: r.usage}
		total := c.usageByQueue[r.clusterQueue]
		if total == nil {
			total = quota.Amounts{}
			c.usageByQueue[r.clusterQueue] = total
		}
		total.Add(r.usage)
		c.workloads[key] = r
	}
}

// Release forgets the quota of a workload (finished, deleted, evicted, or
// an admission write that failed). It returns the ClusterQueue that got
// quota back, or "".
func (c *Cache) Release(key string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.workloads[key]
	if !ok {
		return ""
	}
	c.replaceReservation(key, r, nil)
	return r.clusterQueue
}

// Holds tells whether the workload holds (or is assumed to hold) quota.
func (c *Cache) Holds(key string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, ok := c.workloads[key]
	return ok
}

// ClusterQueue returns the cached ClusterQueue.
func (c *Cache) ClusterQueue(name string) (*kueue.ClusterQueue, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	cq, ok := c.clusterQueues[name]
	if !ok {
		return nil, false
	}
	return cq.obj, true
}

// LocalQueue returns the cached LocalQueue by namespace/name.
func (c *Cache) LocalQueue(key string) (*kueue.LocalQueue, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	lq, ok := c.localQueues[key]
	return lq, ok
}

// CohortMembers returns the ClusterQueues that share quota with the named
// one: its whole cohort tree, or itself alone.
func (c *Cache) CohortMembers(name string) map[string]bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	root := func(cq *kueue.ClusterQueue) string {
		if cq.Spec.CohortName == "" {
			return "cq/" + cq.Name
		}
		a := quota.Ancestors(string(cq.Spec.CohortName), c.parentOf)
		return "cohort/" + a.Chain[len(a.Chain)-1]
	}
	members := map[string]bool{}
	own, ok := c.clusterQueues[name]
	if !ok {
		return map[string]bool{name: true}
	}
	want := root(own.obj)
	for n, cq := range c.clusterQueues {
		if root(cq.obj) == want {
			members[n] = true
		}
	}
	return members
}

func (c *Cache) parentOf(cohort string) (string, bool) {
	co, ok := c.cohorts[cohort]
	if !ok {
		return "", false
	}
	return string(co.Spec.ParentName), true
}

// UsageOf is what an admitted workload charges per flavor and resource:
// each podSet's total usage in its assigned flavors, less the pods that are
// done (reclaimable).
func UsageOf(wl *kueue.Workload) quota.Amounts {
	usage := quota.Amounts{}
	if wl.Status.Admission == nil {
		return usage
	}
	reclaimable := map[kueue.PodSetReference]int32{}
	for _, rp := range wl.Status.ReclaimablePods {
		reclaimable[rp.Name] = rp.Count
	}
	for _, psa := range wl.Status.Admission.PodSetAssignments {
		count := int32(1)
		if psa.Count != nil {
			count = *psa.Count
		}
		for name, q := range psa.ResourceUsage {
			flavor, ok := psa.Flavors[name]
			if !ok {
				continue
			}
			v := quota.ToAmount(name, q)
			if done := reclaimable[psa.Name]; done > 0 && count > 0 {
				v -= quota.MulDiv(v, int64(min(done, count)), int64(count))
			}
			fr := quota.FlavorResource{Flavor: string(flavor), Resource: name}
			usage[fr] = quota.AddSat(usage[fr], v)
		}
	}
	return usage
}

func equalAmounts(a, b quota.Amounts) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// Snapshot builds the scheduler's view: a fresh quota tree with every
// reservation charged, and the queues, flavors and namespaces.
func (c *Cache) Snapshot() *scheduler.Snapshot {
	return c.snapshot(true)
}

// snapshot is Snapshot; withCandidates false leaves out the listing of
// admitted workloads for preemption, which only a cycle needs.
func (c *Cache) snapshot(withCandidates bool) *scheduler.Snapshot {
	c.mu.RLock()
	defer c.mu.RUnlock()
	snap := &scheduler.Snapshot{
		ClusterQueues:   make(map[string]*scheduler.ClusterQueue, len(c.clusterQueues)),
		LocalQueues:     make(map[string]*scheduler.LocalQueue, len(c.localQueues)),
		Flavors:         make(map[string]*kueue.ResourceFlavor, len(c.flavors)),
		NamespaceLabels: make(map[string]labels.Set, len(c.namespaces)),
		FairSharing:     c.fairSharing,
	}
	maps.Copy(snap.Flavors, c.flavors)
	maps.Copy(snap.NamespaceLabels, c.namespaces)
	for key, lq := range c.localQueues {
		snap.LocalQueues[key] = &scheduler.LocalQueue{
			ClusterQueue: string(lq.Spec.ClusterQueue),
			Stopped:      lq.Spec.StopPolicy != nil && *lq.Spec.StopPolicy != kueue.StopPolicyNone,
		}
	}

	cohortNodes := map[string]*quota.Node{}
	cohortNode := func(name string) *quota.Node {
		if n, ok := cohortNodes[name]; ok {
			return n
		}
		var limits map[quota.FlavorResource]quota.Limits
		weight := int64(quota.DefaultWeight)
		if co, ok := c.cohorts[name]; ok {
			limits = limitsOf(co.Spec.ResourceGroups)
			weight = weightOf(co.Spec.FairSharing)
		}
		n := quota.NewNode(name, false, limits)
		n.Weight = weight
		cohortNodes[name] = n
		return n
	}
	names := make([]string, 0, len(c.clusterQueues))
	for name := range c.clusterQueues {
		names = append(names, name)
	}
	sort.Strings(names)
	var roots []*quota.Node
	for _, name := range names {
		cq := c.clusterQueues[name]
		node := quota.NewNode(name, true, cq.limits)
		node.Weight = weightOf(cq.obj.Spec.FairSharing)
		if cohort := string(cq.obj.Spec.CohortName); cohort != "" {
			quota.Attach(cohortNode(cohort), node)
		} else {
			roots = append(roots, node)
		}
		q := *cq.template
		q.Node = node
		snap.ClusterQueues[name] = &q
	}
	// Link cohorts to their parents along chains without cycles; a queue
	// under a cycle is inactive already (its reconciler said so).
	linked := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(cohortNodes)) {
		a := quota.Ancestors(name, c.parentOf)
		if a.HasCycle() {
			continue
		}
		for i := 0; i+1 < len(a.Chain); i++ {
			if linked[a.Chain[i]] {
				break
			}
			quota.Attach(cohortNode(a.Chain[i+1]), cohortNode(a.Chain[i]))
			linked[a.Chain[i]] = true
		}
	}
	for _, n := range cohortNodes {
		if n.Parent == nil {
			roots = append(roots, n)
		}
	}
	for _, r := range roots {
		quota.Finalize(r)
	}
	if withCandidates {
		c.addPreemptionCandidates(snap)
	}
	for name, total := range c.usageByQueue {
		if cq, ok := snap.ClusterQueues[name]; ok {
			cq.Node.ChargeAll(total, 1)
		}
	}
	return snap
}

// addPreemptionCandidates lists every admitted workload when some queue
// may preempt (reclaiming within a cohort looks at the other queues'); a
// cluster where none does pays nothing. The caller holds the lock.
func (c *Cache) addPreemptionCandidates(snap *scheduler.Snapshot) {
	preempting := false
	for _, cq := range snap.ClusterQueues {
		preempting = preempting || cq.Preempts()
	}
	if !preempting {
		return
	}
	snap.Admitted = map[string][]*scheduler.Candidate{}
	snap.Evicting = map[string]quota.Amounts{}
	// Map order is fine: the cycle orders candidates itself (key last), and
	// sums don't depend on order. Sorting 50,000 keys every cycle would not be.
	for _, r := range c.workloads {
		if _, ok := snap.ClusterQueues[r.clusterQueue]; !ok {
			continue
		}
		if r.evicting {
			if snap.Evicting[r.clusterQueue] == nil {
				snap.Evicting[r.clusterQueue] = quota.Amounts{}
			}
			snap.Evicting[r.clusterQueue].Add(r.usage)
			continue
		}
		snap.Admitted[r.clusterQueue] = append(snap.Admitted[r.clusterQueue], r.candidate)
	}
}

// weightOf is a fair-sharing weight in thousandths (default 1).
func weightOf(fs *kueue.FairSharing) int64 {
	if fs == nil || fs.Weight == nil {
		return quota.DefaultWeight
	}
	return fs.Weight.MilliValue()
}

// schedulerQueue is the scheduler's view of a queue, without its quota node.
func schedulerQueue(cq *clusterQueue) *scheduler.ClusterQueue {
	spec := &cq.obj.Spec
	out := &scheduler.ClusterQueue{
		Name:            cq.obj.Name,
		Strategy:        spec.QueueingStrategy,
		WhenCanBorrow:   kueue.MayStopSearch,
		Active:          cq.active,
		InactiveMessage: cq.inactiveMessage,
	}
	if out.Strategy == "" {
		out.Strategy = kueue.BestEffortFIFO
	}
	out.WhenCanPreempt = kueue.TryNextFlavor
	if ff := spec.FlavorFungibility; ff != nil {
		if ff.WhenCanBorrow != "" {
			out.WhenCanBorrow = ff.WhenCanBorrow
		}
		if ff.WhenCanPreempt != "" {
			out.WhenCanPreempt = ff.WhenCanPreempt
		}
		out.PreferPreemption = ff.Preference != nil && *ff.Preference == kueue.PreemptionOverBorrowing
	}
	if p := spec.Preemption; p != nil {
		out.WithinClusterQueue = p.WithinClusterQueue
		out.ReclaimWithinCohort = p.ReclaimWithinCohort
		if b := p.BorrowWithinCohort; b != nil && b.Policy == kueue.BorrowWithinCohortPolicyLowerPriority {
			out.BorrowWithinCohort = b.DeepCopy()
		}
	}
	if spec.NamespaceSelector != nil {
		if sel, err := metav1.LabelSelectorAsSelector(spec.NamespaceSelector); err == nil {
			out.NamespaceSelector = sel
		}
	}
	for _, rg := range spec.ResourceGroups {
		g := scheduler.ResourceGroup{Resources: append([]corev1.ResourceName(nil), rg.CoveredResources...)}
		for _, f := range rg.Flavors {
			g.Flavors = append(g.Flavors, string(f.Name))
		}
		out.Groups = append(out.Groups, g)
	}
	return out
}

func limitsOf(groups []kueue.ResourceGroup) map[quota.FlavorResource]quota.Limits {
	limits := map[quota.FlavorResource]quota.Limits{}
	for _, rg := range groups {
		for _, f := range rg.Flavors {
			for _, r := range f.Resources {
				l := quota.Limits{Nominal: quota.ToAmount(r.Name, r.NominalQuota)}
				if r.BorrowingLimit != nil {
					v := quota.ToAmount(r.Name, *r.BorrowingLimit)
					l.BorrowingLimit = &v
				}
				if r.LendingLimit != nil {
					v := quota.ToAmount(r.Name, *r.LendingLimit)
					l.LendingLimit = &v
				}
				limits[quota.FlavorResource{Flavor: string(f.Name), Resource: r.Name}] = l
			}
		}
	}
	return limits
}
