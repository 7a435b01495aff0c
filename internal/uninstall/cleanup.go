// Package uninstall removes what a removed sluice leaves behind that would
// otherwise get stuck: its webhook configurations (which fail closed with
// no manager behind them) and its finalizers on Workloads, other
// kueue.x-k8s.io objects and Pods (which nothing would remove, so deleting
// them would hang in Terminating). It never deletes a user's object and
// refuses to run while a manager still leads.
package uninstall

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/patch"
)

// FinalizerPrefix marks the finalizers sluice (and Kueue) put on objects.
const FinalizerPrefix = "kueue.x-k8s.io/"

// Options say what to clean.
type Options struct {
	// NamePrefix of the install's cluster-wide objects: sluice- for
	// config/default and the chart, kueue- for config/kueue-names.
	NamePrefix string
	// LeaseNamespace and LeaseName are the manager's leader election
	// Lease: while it is held, a manager runs and would put the
	// finalizers back.
	LeaseNamespace, LeaseName string
	// Force cleans even while the Lease looks held.
	Force bool
	// Now is the clock's time, to judge the Lease.
	Now time.Time
}

// Report is what was cleaned.
type Report struct {
	WebhookConfigurations []string
	// Finalizers removed, by resource ("workloads.kueue.x-k8s.io", "pods").
	Finalizers map[string]int
}

// Cleanup removes the install's webhook configurations, then sluice's
// finalizers from every kueue.x-k8s.io object and from the Pods sluice
// manages.
func Cleanup(ctx context.Context, c client.Client, disc discovery.DiscoveryInterface, opts Options) (Report, error) {
	report := Report{Finalizers: map[string]int{}}
	if err := refuseWhileLeading(ctx, c, opts); err != nil {
		return report, err
	}
	for _, obj := range []client.Object{
		&admissionv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: opts.NamePrefix + "validating-webhook-configuration"}},
		&admissionv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: opts.NamePrefix + "mutating-webhook-configuration"}},
	} {
		err := c.Delete(ctx, obj)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return report, fmt.Errorf("deleting %s: %w", obj.GetName(), err)
		}
		report.WebhookConfigurations = append(report.WebhookConfigurations, obj.GetName())
	}
	resources, err := kueueResources(disc)
	if err != nil {
		return report, err
	}
	for _, gvk := range resources {
		n, err := removeFinalizers(ctx, c, gvk.gvk)
		report.Finalizers[gvk.resource] += n
		if err != nil {
			return report, err
		}
	}
	pods := schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	n, err := removeFinalizers(ctx, c, pods, client.HasLabels{kueue.ManagedLabel})
	report.Finalizers["pods"] += n
	return report, err
}

// refuseWhileLeading fails while the manager's Lease was renewed within its
// duration: a running manager adds the finalizers back.
func refuseWhileLeading(ctx context.Context, c client.Client, opts Options) error {
	if opts.Force || opts.LeaseName == "" {
		return nil
	}
	lease := &coordinationv1.Lease{}
	err := c.Get(ctx, client.ObjectKey{Namespace: opts.LeaseNamespace, Name: opts.LeaseName}, lease)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the manager's Lease %s/%s: %w", opts.LeaseNamespace, opts.LeaseName, err)
	}
	spec := lease.Spec
	if spec.HolderIdentity == nil || *spec.HolderIdentity == "" || spec.RenewTime == nil || spec.LeaseDurationSeconds == nil {
		return nil
	}
	expires := spec.RenewTime.Add(time.Duration(*spec.LeaseDurationSeconds) * time.Second)
	if opts.Now.Before(expires) {
		return fmt.Errorf("a sluice manager (%s) holds the Lease %s/%s until %s: remove sluice first (helm uninstall, or kubectl delete the manager's Deployment), or pass --force",
			*spec.HolderIdentity, opts.LeaseNamespace, opts.LeaseName, expires.Format(time.RFC3339))
	}
	return nil
}

type servedResource struct {
	resource string
	gvk      schema.GroupVersionKind
}

// kueueResources are the kueue.x-k8s.io kinds the API server serves, in
// their preferred version.
func kueueResources(disc discovery.DiscoveryInterface) ([]servedResource, error) {
	lists, err := disc.ServerPreferredResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, fmt.Errorf("discovering the served kinds: %w", err)
	}
	var out []servedResource
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil || gv.Group != kueue.GroupVersion.Group {
			continue
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "patch") {
				continue
			}
			out = append(out, servedResource{resource: r.Name + "." + gv.Group, gvk: gv.WithKind(r.Kind)})
		}
	}
	return out, nil
}

// removeFinalizers takes sluice's finalizers off every object of gvk the
// selectors match, and counts the objects it changed.
func removeFinalizers(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, opts ...client.ListOption) (int, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := c.List(ctx, list, opts...); err != nil {
		return 0, fmt.Errorf("listing %s: %w", gvk.Kind, err)
	}
	changed := 0
	var errs []error
	for i := range list.Items {
		obj := &list.Items[i]
		obj.SetGroupVersionKind(gvk)
		if !slices.ContainsFunc(obj.Finalizers, isSluices) {
			continue
		}
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				return err
			}
			before := obj.DeepCopy()
			obj.Finalizers = slices.DeleteFunc(obj.Finalizers, isSluices)
			return c.Patch(ctx, obj, patch.OnVersion(before))
		})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			errs = append(errs, fmt.Errorf("%s %s/%s: %w", gvk.Kind, obj.Namespace, obj.Name, err))
		default:
			changed++
		}
	}
	return changed, errors.Join(errs...)
}

func isSluices(finalizer string) bool { return strings.HasPrefix(finalizer, FinalizerPrefix) }
