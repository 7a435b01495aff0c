package manager

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
)

// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch

// frameworkGuard keeps the frameworks a configuration names but sluice
// does not implement from letting their jobs run outside quota: allowed
// while the cluster does not serve their kind (nothing of it can exist),
// a startup error if it does, and the manager stops with an error if the
// kind's CustomResourceDefinition appears while it runs (a restart then
// refuses to start, naming the field).
//
// It also watches for the enabled kinds sluice implements whose
// CustomResourceDefinition is not served yet (JobSet installed after
// sluice): their controllers can't watch them, so the manager stops when
// one appears and sets it up on restart. Meanwhile their webhooks already
// suspend what is created, so nothing runs unqueued.
type frameworkGuard struct {
	// crds are the refused CustomResourceDefinition names, with the
	// configuration field that named each.
	crds map[string]string
	// awaited are the CustomResourceDefinition names the enabled kinds
	// need (their own, and that of the kind they run as), with the
	// framework names that need each; checkServed keeps only those not
	// served.
	awaited map[string][]string
}

func newFrameworkGuard(frameworks []string, registrations []integration.Registration) *frameworkGuard {
	g := &frameworkGuard{crds: map[string]string{}, awaited: map[string][]string{}}
	for i, fw := range frameworks {
		implemented := slices.ContainsFunc(registrations, func(r integration.Registration) bool { return r.Framework == fw })
		if crd := configapi.KueueFrameworks[fw]; !implemented && crd != "" {
			g.crds[crd] = fmt.Sprintf("integrations.frameworks[%d] (%s)", i, fw)
		}
	}
	crdOf := map[schema.GroupVersionKind]string{}
	for _, r := range registrations {
		crdOf[r.GVK] = r.CRD
	}
	for _, r := range registrations {
		if !slices.Contains(frameworks, r.Framework) {
			continue
		}
		needs := []string{r.CRD}
		if r.Queued != nil && r.Queued.RunsAs != nil {
			needs = append(needs, crdOf[r.Queued.RunsAs.GVK])
		}
		for _, crd := range needs {
			if crd != "" {
				g.awaited[crd] = append(g.awaited[crd], r.Framework)
			}
		}
	}
	return g
}

// refusal is the error for a served kind.
func (g *frameworkGuard) refusal(crd string) error {
	if fws, ok := g.awaited[crd]; ok {
		return fmt.Errorf("the cluster now serves %s: restarting to queue the jobs of integration %s", crd, strings.Join(fws, ", "))
	}
	return fmt.Errorf("%s: sluice does not implement this framework yet and the cluster serves %s: its jobs would run outside quota; remove it from the configuration (or the CustomResourceDefinition from the cluster)",
		g.crds[crd], crd)
}

// checkServed refuses the frameworks whose kinds the cluster serves now,
// and keeps awaiting only the enabled kinds it does not serve; it returns
// those by framework name.
func (g *frameworkGuard) checkServed(mapper meta.RESTMapper) (map[string]bool, error) {
	for _, crd := range slices.Sorted(maps.Keys(g.crds)) {
		served, err := isServed(mapper, crd)
		switch {
		case err != nil:
			return nil, fmt.Errorf("checking whether the cluster serves %s for %s: %w", crd, g.crds[crd], err)
		case served:
			return nil, g.refusal(crd)
		}
	}
	awaited := map[string]bool{}
	for _, crd := range slices.Sorted(maps.Keys(g.awaited)) {
		served, err := isServed(mapper, crd)
		switch {
		case err != nil:
			return nil, fmt.Errorf("checking whether the cluster serves %s for integration %s: %w", crd, strings.Join(g.awaited[crd], ", "), err)
		case served:
			delete(g.awaited, crd)
		default:
			for _, fw := range g.awaited[crd] {
				awaited[fw] = true
			}
		}
	}
	return awaited, nil
}

// isServed tells whether the cluster serves the resource of a
// CustomResourceDefinition name (<plural>.<group>).
func isServed(mapper meta.RESTMapper, crd string) (bool, error) {
	resource, group, _ := strings.Cut(crd, ".")
	_, err := mapper.KindFor(schema.GroupVersionResource{Group: group, Resource: resource})
	switch {
	case err == nil:
		return true, nil
	case meta.IsNoMatchError(err):
		return false, nil
	}
	return false, err
}

// watching tells whether the guard has anything to watch for.
func (g *frameworkGuard) watching() bool {
	return len(g.crds)+len(g.awaited) > 0
}

// watch runs until ctx ends or a guarded CustomResourceDefinition appears.
func (g *frameworkGuard) watch(ctx context.Context, c cache.Cache) error {
	crd := &metav1.PartialObjectMetadata{}
	crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	informer, err := c.GetInformer(ctx, crd)
	if err != nil {
		return fmt.Errorf("watching CustomResourceDefinitions for the frameworks sluice does not implement: %w", err)
	}
	found := make(chan string, 1)
	_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		if m, ok := obj.(metav1.Object); ok {
			_, refused := g.crds[m.GetName()]
			if _, awaited := g.awaited[m.GetName()]; refused || awaited {
				select {
				case found <- m.GetName():
				default:
				}
			}
		}
	}})
	if err != nil {
		return fmt.Errorf("watching CustomResourceDefinitions: %w", err)
	}
	select {
	case <-ctx.Done():
		return nil
	case name := <-found:
		err := g.refusal(name)
		ctrl.LoggerFrom(ctx).Error(err, "stopping: a framework's kind is now served")
		return err
	}
}
