package multikueue

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
)

// cacheSyncTimeout bounds the wait for a new worker connection's first
// list: a worker that can't list in that time is not connected.
const cacheSyncTimeout = 30 * time.Second

// Remotes holds the connections to the worker clusters. Each connection
// watches, in its worker, the objects this manager made there (they carry
// the origin label), and turns every change into an event for the local
// Workload they belong to. It is a manager Runnable: connections live
// until the manager stops or their cluster goes.
type Remotes struct {
	Scheme *runtime.Scheme
	// Origin is the value of the origin label on what this manager makes.
	Origin string
	// Kinds are the kinds made in workers besides Workloads (the
	// adapters' jobs).
	Kinds []integration.RemoteAdapter
	// RestConfigFor is how connections are made (nil: as they are); tests
	// and dev use it to tune client limits.
	RestConfigFor func(*rest.Config) *rest.Config

	mu       sync.Mutex
	byName   map[string]*remote
	requests chan connectRequest
	events   chan event.GenericEvent
	once     sync.Once
}

// remote is one worker connection.
type remote struct {
	// Cached reads the objects this manager made in the worker from the
	// connection's cache; writes go to the worker.
	cached client.Client
	// direct reads from the worker (probes, LocalQueues).
	direct client.Client
	// fingerprint identifies the kubeconfig the connection was made from.
	fingerprint string
	stop        context.CancelFunc
}

type connectRequest struct {
	name        string
	config      *rest.Config
	fingerprint string
	done        chan error
}

func (r *Remotes) init() {
	r.once.Do(func() {
		r.byName = map[string]*remote{}
		r.requests = make(chan connectRequest)
		r.events = make(chan event.GenericEvent, 1024)
	})
}

// Events are the local Workloads to reconcile because something of theirs
// changed in a worker (a GenericEvent per Workload, by namespace and name).
func (r *Remotes) Events() <-chan event.GenericEvent {
	r.init()
	return r.events
}

// Start runs the connections until ctx ends.
func (r *Remotes) Start(ctx context.Context) error {
	r.init()
	for {
		select {
		case <-ctx.Done():
			r.mu.Lock()
			for name, rm := range r.byName {
				rm.stop()
				delete(r.byName, name)
			}
			r.mu.Unlock()
			return nil
		case req := <-r.requests:
			req.done <- r.connect(ctx, req)
		}
	}
}

// NeedLeaderElection: only the leader dispatches.
func (r *Remotes) NeedLeaderElection() bool { return true }

// Connect makes (or keeps, when fingerprint is unchanged) the connection
// to a worker; it returns once the connection's cache has synced.
func (r *Remotes) Connect(ctx context.Context, name string, config *rest.Config, fingerprint string) error {
	r.init()
	req := connectRequest{name: name, config: config, fingerprint: fingerprint, done: make(chan error, 1)}
	select {
	case r.requests <- req:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-req.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Disconnect drops a worker's connection.
func (r *Remotes) Disconnect(name string) {
	r.init()
	r.mu.Lock()
	defer r.mu.Unlock()
	if rm, ok := r.byName[name]; ok {
		rm.stop()
		delete(r.byName, name)
	}
}

// Client is the connection to a worker: a client whose reads of the
// objects this manager made there come from its cache, and an uncached
// one. ok is false when there is no connection.
func (r *Remotes) Client(name string) (cached, direct client.Client, ok bool) {
	r.init()
	r.mu.Lock()
	defer r.mu.Unlock()
	rm, ok := r.byName[name]
	if !ok {
		return nil, nil, false
	}
	return rm.cached, rm.direct, true
}

func (r *Remotes) connect(ctx context.Context, req connectRequest) error {
	r.mu.Lock()
	if rm, ok := r.byName[req.name]; ok {
		if rm.fingerprint == req.fingerprint {
			r.mu.Unlock()
			return nil
		}
		rm.stop()
		delete(r.byName, req.name)
	}
	r.mu.Unlock()
	config := rest.CopyConfig(req.config)
	if r.RestConfigFor != nil {
		config = r.RestConfigFor(config)
	}
	ours := cache.ByObject{Label: labels.SelectorFromSet(labels.Set{kueue.MultiKueueOriginLabel: r.Origin})}
	byObject := map[client.Object]cache.ByObject{&kueue.Workload{}: ours}
	for _, k := range r.Kinds {
		byObject[k.NewObject()] = ours
	}
	c, err := cache.New(config, cache.Options{Scheme: r.Scheme, ByObject: byObject, DefaultTransform: cache.TransformStripManagedFields()})
	if err != nil {
		return fmt.Errorf("creating the cache of worker %s: %w", req.name, err)
	}
	direct, err := client.New(config, client.Options{Scheme: r.Scheme})
	if err != nil {
		return fmt.Errorf("creating a client of worker %s: %w", req.name, err)
	}
	cached, err := client.New(config, client.Options{Scheme: r.Scheme, Cache: &client.CacheOptions{Reader: c}})
	if err != nil {
		return fmt.Errorf("creating a client of worker %s: %w", req.name, err)
	}
	runCtx, stop := context.WithCancel(ctx)
	for obj := range byObject {
		informer, err := c.GetInformer(runCtx, obj)
		if err != nil {
			stop()
			return fmt.Errorf("watching %T in worker %s: %w", obj, req.name, err)
		}
		if _, err := informer.AddEventHandler(r.handler()); err != nil {
			stop()
			return fmt.Errorf("watching %T in worker %s: %w", obj, req.name, err)
		}
	}
	go func() {
		if err := c.Start(runCtx); err != nil {
			ctrl.LoggerFrom(runCtx).Error(err, "worker cache stopped", "multiKueueCluster", req.name)
		}
	}()
	syncCtx, cancel := context.WithTimeout(runCtx, cacheSyncTimeout)
	defer cancel()
	if !c.WaitForCacheSync(syncCtx) {
		stop()
		return fmt.Errorf("worker %s: %w", req.name, errors.New("could not list its Workloads and jobs in time"))
	}
	r.mu.Lock()
	r.byName[req.name] = &remote{cached: cached, direct: direct, fingerprint: req.fingerprint, stop: stop}
	r.mu.Unlock()
	// The first list's events came before the connection could be used:
	// again, now that it can (a worker back after an outage may hold
	// copies that must go).
	return r.replay(runCtx, req.name, cached)
}

// replay sends an event for every object of the connection's cache.
func (r *Remotes) replay(ctx context.Context, name string, cached client.Client) error {
	lists := []client.ObjectList{&kueue.WorkloadList{}}
	for _, k := range r.Kinds {
		lists = append(lists, k.NewList())
	}
	for _, list := range lists {
		if err := cached.List(ctx, list); err != nil {
			return fmt.Errorf("listing %T of worker %s: %w", list, name, err)
		}
		if err := meta.EachListItem(list, func(o runtime.Object) error {
			if key, ok := localWorkloadOf(o.(client.Object)); ok {
				r.events <- event.GenericEvent{Object: &kueue.Workload{ObjectMeta: objectMeta(key)}}
			}
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// handler turns a change of a remote object into an event for the local
// Workload it belongs to: a Workload is its own, a job names it in its
// prebuilt-workload label.
func (r *Remotes) handler() toolscache.ResourceEventHandler {
	notify := func(obj any) {
		if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		o, ok := obj.(client.Object)
		if !ok {
			return
		}
		key, ok := localWorkloadOf(o)
		if !ok {
			return
		}
		r.events <- event.GenericEvent{Object: &kueue.Workload{ObjectMeta: objectMeta(key)}}
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    notify,
		UpdateFunc: func(_, obj any) { notify(obj) },
		DeleteFunc: notify,
	}
}

// localWorkloadOf is the local Workload a remote object belongs to.
func localWorkloadOf(o client.Object) (types.NamespacedName, bool) {
	if _, isWorkload := o.(*kueue.Workload); isWorkload {
		return types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}, true
	}
	name := o.GetLabels()[kueue.PrebuiltWorkloadLabel]
	return types.NamespacedName{Namespace: o.GetNamespace(), Name: name}, name != ""
}

func objectMeta(key types.NamespacedName) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}
}

// probe is a connection's kubeconfig fingerprint and uncached client.
func (r *Remotes) probe(name string) (string, client.Client, bool) {
	r.init()
	r.mu.Lock()
	defer r.mu.Unlock()
	rm, ok := r.byName[name]
	if !ok {
		return "", nil, false
	}
	return rm.fingerprint, rm.direct, true
}

// Names are the connected workers.
func (r *Remotes) Names() []string {
	r.init()
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.byName))
}
