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
)

// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch

// frameworkGuard keeps the frameworks a configuration names but sluice
// does not implement from letting their jobs run outside quota: allowed
// while the cluster does not serve their kind (nothing of it can exist),
// a startup error if it does, and the manager stops with an error if the
// kind's CustomResourceDefinition appears while it runs (a restart then
// refuses to start, naming the field).
type frameworkGuard struct {
	// crds are the guarded CustomResourceDefinition names, with the
	// configuration field that named each.
	crds map[string]string
}

func newFrameworkGuard(frameworks []string) *frameworkGuard {
	g := &frameworkGuard{crds: map[string]string{}}
	for i, fw := range frameworks {
		if crd, ok := configapi.NotYetImplementedFrameworks[fw]; ok {
			g.crds[crd] = fmt.Sprintf("integrations.frameworks[%d] (%s)", i, fw)
		}
	}
	return g
}

// refusal is the error for a served kind.
func (g *frameworkGuard) refusal(crd string) error {
	return fmt.Errorf("%s: sluice does not implement this framework yet and the cluster serves %s: its jobs would run outside quota; remove it from the configuration (or the CustomResourceDefinition from the cluster)",
		g.crds[crd], crd)
}

// checkServed refuses the frameworks whose kinds the cluster serves now.
func (g *frameworkGuard) checkServed(mapper meta.RESTMapper) error {
	for _, crd := range slices.Sorted(maps.Keys(g.crds)) {
		resource, group, _ := strings.Cut(crd, ".")
		_, err := mapper.KindFor(schema.GroupVersionResource{Group: group, Resource: resource})
		switch {
		case err == nil:
			return g.refusal(crd)
		case !meta.IsNoMatchError(err):
			return fmt.Errorf("checking whether the cluster serves %s for %s: %w", crd, g.crds[crd], err)
		}
	}
	return nil
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
			if _, guarded := g.crds[m.GetName()]; guarded {
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
		ctrl.LoggerFrom(ctx).Error(err, "stopping: a framework sluice does not implement is now served")
		return err
	}
}
