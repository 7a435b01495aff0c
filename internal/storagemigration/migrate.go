// Package storagemigration rewrites the stored objects of sluice's
// CustomResourceDefinitions in their storage version (kueue.x-k8s.io/v1beta2)
// and then drops the older versions from the CRDs' status.storedVersions,
// through the API server only (what `sluice migrate` runs after switching
// from a Kueue that stored v1beta1). It must not touch objects of other
// groups, and it changes no object's content.
package storagemigration

import (
	"context"
	"fmt"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Group is the API group migrated.
const Group = "kueue.x-k8s.io"

// Result says what one CustomResourceDefinition's migration did.
type Result struct {
	CRD string
	// Rewritten objects (0 when storedVersions held only the storage
	// version: nothing to do).
	Rewritten int
	// From are the stored versions dropped.
	From []string
}

// Run migrates every CustomResourceDefinition of the group whose
// storedVersions hold more than its storage version. An object is
// rewritten by an update of itself, unchanged (the API server encodes it
// in the storage version); one changed meanwhile (a conflict) was written
// by its writer in the storage version already. storedVersions is narrowed
// only once every object of the CRD was rewritten.
func Run(ctx context.Context, c client.Client) ([]Result, error) {
	crds := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := c.List(ctx, crds); err != nil {
		return nil, fmt.Errorf("listing CustomResourceDefinitions: %w", err)
	}
	var results []Result
	for i := range crds.Items {
		crd := &crds.Items[i]
		if crd.Spec.Group != Group {
			continue
		}
		storage := storageVersion(crd)
		if storage == "" {
			return results, fmt.Errorf("%s has no storage version", crd.Name)
		}
		old := slices.DeleteFunc(slices.Clone(crd.Status.StoredVersions), func(v string) bool { return v == storage })
		if len(old) == 0 {
			continue
		}
		n, err := rewrite(ctx, c, schema.GroupVersionKind{Group: Group, Version: storage, Kind: crd.Spec.Names.ListKind})
		if err != nil {
			return results, fmt.Errorf("rewriting the %s: %w", crd.Name, err)
		}
		crd.Status.StoredVersions = []string{storage}
		if err := c.Status().Update(ctx, crd); err != nil {
			return results, fmt.Errorf("setting the stored versions of %s to %s: %w", crd.Name, storage, err)
		}
		results = append(results, Result{CRD: crd.Name, Rewritten: n, From: old})
	}
	return results, nil
}

func storageVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}

// rewrite updates every object of a kind with itself, page by page.
func rewrite(ctx context.Context, c client.Client, listGVK schema.GroupVersionKind) (int, error) {
	n := 0
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(listGVK)
	for {
		if err := c.List(ctx, list, client.Limit(500), client.Continue(list.GetContinue())); err != nil {
			return n, err
		}
		for i := range list.Items {
			obj := &list.Items[i]
			err := c.Update(ctx, obj)
			switch {
			case err == nil, apierrors.IsConflict(err), apierrors.IsNotFound(err):
				n++
			default:
				return n, fmt.Errorf("%s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
			}
		}
		if list.GetContinue() == "" {
			return n, nil
		}
	}
}
