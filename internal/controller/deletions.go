package controller

import (
	"sync"

	toolscache "k8s.io/client-go/tools/cache"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/workload"
)

// deletedVersions remembers the last version of each Workload the watch
// showed deleted, for the reconcile that then finds it gone: the Tracker
// forgets the Workload only if it has not settled since on a newer version
// of that name (another Workload created under it and read first).
type deletedVersions struct {
	mu       sync.Mutex
	versions map[string]string
}

// note is the informer's delete handler; a deletion the informer missed
// (a relist) comes as a tombstone holding the last state it knew.
func (d *deletedVersions) note(obj any) {
	if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	wl, ok := obj.(*kueue.Workload)
	if !ok {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.versions == nil {
		d.versions = map[string]string{}
	}
	d.versions[workload.Key(wl)] = wl.ResourceVersion
}

// take returns and drops the version a Workload was deleted at ("" when no
// deletion of it was seen).
func (d *deletedVersions) take(key string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	v := d.versions[key]
	delete(d.versions, key)
	return v
}
