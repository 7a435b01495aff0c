package manager

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/sluicehq/sluice/internal/apply"
)

// errNotSurelyLeader refuses a write made while this manager does not surely
// hold the lease.
var errNotSurelyLeader = errors.New("not writing: this manager does not surely hold the leader lease (it may have been frozen past it)")

// fencedClient lets the writes of the leader's controllers (the
// reconcilers', the integrations', the apply layer's) go only within the
// fence: a leader frozen past its lease and running again lands no write
// after the new leader's first. The write's context carries the fence's
// deadline, so a request cannot outlive it either. Reads are not fenced,
// nor the writes of what runs on every replica (certificates, webhook
// scoping), which use the manager's own client.
func fencedClient(c client.Client, fence apply.Fence) client.Client {
	within := func(ctx context.Context, write func(context.Context) error) error {
		until, ok := fence.WritableUntil()
		if !ok {
			return errNotSurelyLeader
		}
		if !until.IsZero() {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, until)
			defer cancel()
		}
		return write(ctx)
	}
	return interceptor.NewClient(withoutWatch{c}, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			return within(ctx, func(ctx context.Context) error { return c.Create(ctx, obj, opts...) })
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			return within(ctx, func(ctx context.Context) error { return c.Update(ctx, obj, opts...) })
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			return within(ctx, func(ctx context.Context) error { return c.Patch(ctx, obj, patch, opts...) })
		},
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			return within(ctx, func(ctx context.Context) error { return c.Apply(ctx, obj, opts...) })
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			return within(ctx, func(ctx context.Context) error { return c.Delete(ctx, obj, opts...) })
		},
		DeleteAllOf: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteAllOfOption) error {
			return within(ctx, func(ctx context.Context) error { return c.DeleteAllOf(ctx, obj, opts...) })
		},
		SubResourceCreate: func(ctx context.Context, c client.Client, sub string, obj, subObj client.Object, opts ...client.SubResourceCreateOption) error {
			return within(ctx, func(ctx context.Context) error { return c.SubResource(sub).Create(ctx, obj, subObj, opts...) })
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			return within(ctx, func(ctx context.Context) error { return c.SubResource(sub).Update(ctx, obj, opts...) })
		},
		SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			return within(ctx, func(ctx context.Context) error { return c.SubResource(sub).Apply(ctx, obj, opts...) })
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			return within(ctx, func(ctx context.Context) error { return c.SubResource(sub).Patch(ctx, obj, patch, opts...) })
		},
	})
}

// withoutWatch lets the manager's client (which has no Watch: the cache
// watches) be wrapped by controller-runtime's interceptor.
type withoutWatch struct{ client.Client }

func (withoutWatch) Watch(context.Context, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
	return nil, errors.New("the manager's client does not watch")
}
