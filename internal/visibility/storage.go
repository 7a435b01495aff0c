package visibility

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/apis/visibility"
	"github.com/sluicehq/sluice/apis/visibility/v1beta1"
	"github.com/sluicehq/sluice/apis/visibility/v1beta2"
	"github.com/sluicehq/sluice/internal/queue"
)

// Source is where the pending workloads and their order come from.
type Source interface {
	// PendingInClusterQueue is the ClusterQueue's waiting workloads in the
	// order it serves them; false when it is not known.
	PendingInClusterQueue(name string) ([]queue.Position, bool)
	// PendingInLocalQueue is the same for a LocalQueue (namespace/name).
	PendingInLocalQueue(key string) ([]queue.Position, bool)
}

// version is what differs between the served versions: the Go types of
// the page and of the query options. Items are built as v1beta2's and
// converted (the versions' items have the same fields).
type version struct {
	newSummary func(items []v1beta2.PendingWorkload) runtime.Object
	newOptions func() runtime.Object
	page       func(options runtime.Object) (offset, limit int64, ok bool)
}

var versions = map[string]version{
	v1beta2.GroupVersion.Version: {
		newSummary: func(items []v1beta2.PendingWorkload) runtime.Object {
			return &v1beta2.PendingWorkloadsSummary{Items: items}
		},
		newOptions: func() runtime.Object { return &v1beta2.PendingWorkloadOptions{Limit: visibility.DefaultLimit} },
		page: func(o runtime.Object) (int64, int64, bool) {
			opts, ok := o.(*v1beta2.PendingWorkloadOptions)
			if !ok {
				return 0, 0, false
			}
			return opts.Offset, opts.Limit, true
		},
	},
	v1beta1.GroupVersion.Version: {
		newSummary: func(items []v1beta2.PendingWorkload) runtime.Object {
			out := &v1beta1.PendingWorkloadsSummary{Items: make([]v1beta1.PendingWorkload, len(items))}
			for i := range items {
				out.Items[i] = v1beta1.PendingWorkload(items[i])
			}
			return out
		},
		newOptions: func() runtime.Object { return &v1beta1.PendingWorkloadOptions{Limit: visibility.DefaultLimit} },
		page: func(o runtime.Object) (int64, int64, bool) {
			opts, ok := o.(*v1beta1.PendingWorkloadOptions)
			if !ok {
				return 0, 0, false
			}
			return opts.Offset, opts.Limit, true
		},
	},
}

// parentREST stands for clusterqueues and localqueues: only their
// pendingworkloads subresource is served, and the API machinery needs the
// parent registered.
type parentREST struct {
	v          version
	namespaced bool
	singular   string
}

var (
	_ rest.Storage              = &parentREST{}
	_ rest.Scoper               = &parentREST{}
	_ rest.SingularNameProvider = &parentREST{}
)

func (p *parentREST) New() runtime.Object     { return p.v.newSummary(nil) }
func (p *parentREST) Destroy()                {}
func (p *parentREST) NamespaceScoped() bool   { return p.namespaced }
func (p *parentREST) GetSingularName() string { return p.singular }

// pendingREST serves {clusterqueues,localqueues}/{name}/pendingworkloads.
type pendingREST struct {
	v          version
	source     Source
	namespaced bool
}

var (
	_ rest.Storage           = &pendingREST{}
	_ rest.Scoper            = &pendingREST{}
	_ rest.GetterWithOptions = &pendingREST{}
)

func (p *pendingREST) New() runtime.Object   { return p.v.newSummary(nil) }
func (p *pendingREST) Destroy()              {}
func (p *pendingREST) NamespaceScoped() bool { return p.namespaced }

// NewGetOptions is the query's type; with no query at all the decoding is
// skipped, so the defaults are set here too.
func (p *pendingREST) NewGetOptions() (runtime.Object, bool, string) {
	return p.v.newOptions(), false, ""
}

// Get returns a page of the queue's pending workloads, in order.
func (p *pendingREST) Get(ctx context.Context, name string, options runtime.Object) (runtime.Object, error) {
	offset, limit, ok := p.v.page(options)
	if !ok {
		return nil, fmt.Errorf("unexpected query options %T", options)
	}
	var positions []queue.Position
	if p.namespaced {
		namespace, _ := genericrequest.NamespaceFrom(ctx)
		if positions, ok = p.source.PendingInLocalQueue(namespace + "/" + name); !ok {
			return nil, apierrors.NewNotFound(v1beta2.Resource("localqueue"), name)
		}
	} else if positions, ok = p.source.PendingInClusterQueue(name); !ok {
		return nil, apierrors.NewNotFound(v1beta2.Resource("clusterqueue"), name)
	}
	return p.v.newSummary(pageOf(positions, offset, limit)), nil
}

// pageOf is the items from offset, at most limit of them.
func pageOf(positions []queue.Position, offset, limit int64) []v1beta2.PendingWorkload {
	offset, limit = visibility.Page(offset, limit)
	if offset >= int64(len(positions)) {
		return []v1beta2.PendingWorkload{}
	}
	positions = positions[offset:min(int64(len(positions)), offset+limit)]
	out := make([]v1beta2.PendingWorkload, len(positions))
	for i, p := range positions {
		out[i] = pendingWorkload(p)
	}
	return out
}

// pendingWorkload is one item: the workload's identity and owners, where
// it stands, and why it waits as sluice last wrote it.
func pendingWorkload(p queue.Position) v1beta2.PendingWorkload {
	wl := p.Info.Obj
	item := v1beta2.PendingWorkload{
		ObjectMeta: metav1.ObjectMeta{Name: p.Info.Name, Namespace: p.Info.Namespace},
		Priority:   p.Info.Priority, LocalQueueName: kueue.LocalQueueName(p.Info.LocalQueue),
		PositionInClusterQueue: int32(p.InClusterQueue), PositionInLocalQueue: int32(p.InLocalQueue),
	}
	if wl == nil {
		return item
	}
	item.CreationTimestamp = wl.CreationTimestamp
	for _, ref := range wl.OwnerReferences {
		item.OwnerReferences = append(item.OwnerReferences, metav1.OwnerReference{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, UID: ref.UID})
	}
	for _, c := range wl.Status.Conditions {
		if c.Type == kueue.WorkloadQuotaReserved && c.Status == metav1.ConditionFalse {
			item.Reason, item.Message = c.Reason, c.Message
		}
	}
	return item
}
