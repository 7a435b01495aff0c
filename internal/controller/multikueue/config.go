package multikueue

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

var errBadParameters = errors.New("parameters must name a " + kueue.GroupVersion.Group + " MultiKueueConfig")

// configOf reads the MultiKueueConfig a MultiKueue AdmissionCheck names.
func configOf(ctx context.Context, c client.Reader, ac *kueue.AdmissionCheck) (*kueue.MultiKueueConfig, error) {
	p := ac.Spec.Parameters
	if p == nil || p.APIGroup != kueue.GroupVersion.Group || p.Kind != "MultiKueueConfig" {
		return nil, errBadParameters
	}
	cfg := &kueue.MultiKueueConfig{}
	if err := c.Get(ctx, client.ObjectKey{Name: p.Name}, cfg); err != nil {
		return nil, fmt.Errorf("reading MultiKueueConfig %s: %w", p.Name, err)
	}
	return cfg, nil
}

// multiKueueChecks are the MultiKueue AdmissionChecks by name.
func multiKueueChecks(ctx context.Context, c client.Reader) (map[string]*kueue.AdmissionCheck, error) {
	list := &kueue.AdmissionCheckList{}
	if err := c.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing AdmissionChecks: %w", err)
	}
	out := map[string]*kueue.AdmissionCheck{}
	for i := range list.Items {
		if list.Items[i].Spec.ControllerName == kueue.MultiKueueControllerName {
			out[list.Items[i].Name] = &list.Items[i]
		}
	}
	return out, nil
}

// dispatchingQueues are the LocalQueues of the manager whose ClusterQueue
// has a MultiKueue check whose config lists the cluster.
func dispatchingQueues(ctx context.Context, c client.Reader, cluster string) ([]types.NamespacedName, error) {
	checks, err := multiKueueChecks(ctx, c)
	if err != nil {
		return nil, err
	}
	using := map[string]bool{}
	for name, ac := range checks {
		cfg, err := configOf(ctx, c, ac)
		if err != nil {
			continue // the check is inactive: nothing is dispatched through it
		}
		if slices.Contains(cfg.Spec.Clusters, cluster) {
			using[name] = true
		}
	}
	if len(using) == 0 {
		return nil, nil
	}
	cqs := &kueue.ClusterQueueList{}
	if err := c.List(ctx, cqs); err != nil {
		return nil, fmt.Errorf("listing ClusterQueues: %w", err)
	}
	dispatching := map[string]bool{}
	for _, cq := range cqs.Items {
		if s := cq.Spec.AdmissionChecksStrategy; s != nil {
			for _, rule := range s.AdmissionChecks {
				if using[string(rule.Name)] {
					dispatching[cq.Name] = true
				}
			}
		}
	}
	lqs := &kueue.LocalQueueList{}
	if err := c.List(ctx, lqs); err != nil {
		return nil, fmt.Errorf("listing LocalQueues: %w", err)
	}
	var out []types.NamespacedName
	for _, lq := range lqs.Items {
		if dispatching[string(lq.Spec.ClusterQueue)] {
			out = append(out, client.ObjectKeyFromObject(&lq))
		}
	}
	return out, nil
}
