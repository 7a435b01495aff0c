package appwrapper

import (
	"fmt"

	awv1beta2 "github.com/project-codeflare/appwrapper/api/v1beta2"
	awutils "github.com/project-codeflare/appwrapper/pkg/utils"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/sluicehq/sluice/apis/scheme"
	"github.com/sluicehq/sluice/internal/integration"
)

// component is one component of an AppWrapper as the AppWrapper project
// reads it: its template decoded, and its pod sets (declared, else
// inferred for the kinds it knows).
type component struct {
	template *unstructured.Unstructured
	podSets  []awv1beta2.AppWrapperPodSet
}

// readComponent decodes the i-th component.
func readComponent(c *awv1beta2.AppWrapperComponent) (component, error) {
	obj := &unstructured.Unstructured{}
	if _, _, err := unstructured.UnstructuredJSONScheme.Decode(c.Template.Raw, nil, obj); err != nil {
		return component{}, fmt.Errorf("decoding the template: %w", err)
	}
	if len(c.DeclaredPodSets) > 0 {
		return component{template: obj, podSets: c.DeclaredPodSets}, nil
	}
	inferred, err := awutils.InferPodSets(obj)
	if err != nil {
		return component{}, fmt.Errorf("inferring its pod sets: %w", err)
	}
	return component{template: obj, podSets: inferred}, nil
}

// makes is the AppWrapper's Makes: an object is the AppWrapper's when it is
// one of its components as the AppWrapper controller creates them (the
// component's kind and name: its template's, or for a generated name the
// one the controller recorded in the status), the component has pod sets
// the Workload counts, and the object runs no more pods than they count,
// asking for no more each. A component without pod sets counts no pod: an
// object whose pods its Workload doesn't count is not the AppWrapper's,
// whatever its kind (a LeaderWorkerSet wrapped without declaring its pod
// sets is queued as if it had no owner).
func makes(parent, child client.Object) bool {
	aw, ok := parent.(*awv1beta2.AppWrapper)
	if !ok {
		return false
	}
	live, err := asUnstructured(child)
	if err != nil {
		return false
	}
	for i := range aw.Spec.Components {
		c, err := readComponent(&aw.Spec.Components[i])
		if err != nil || !isComponent(aw, i, c.template, live) {
			continue
		}
		return len(c.podSets) > 0 && fits(c, live)
	}
	return false
}

// asUnstructured is child as the AppWrapper project's helpers read
// objects, with its apiVersion and kind (objects read from a cache lack
// them).
func asUnstructured(child client.Object) (*unstructured.Unstructured, error) {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(child)
	if err != nil {
		return nil, err
	}
	live := &unstructured.Unstructured{Object: content}
	gvk, err := apiutil.GVKForObject(child, scheme.Scheme)
	if err != nil {
		return nil, err
	}
	live.SetGroupVersionKind(gvk)
	return live, nil
}

// isComponent tells whether live is the object the AppWrapper controller
// makes of the i-th component's template.
func isComponent(aw *awv1beta2.AppWrapper, i int, template, live *unstructured.Unstructured) bool {
	if template.GroupVersionKind().GroupKind() != live.GroupVersionKind().GroupKind() {
		return false
	}
	if name := template.GetName(); name != "" {
		return name == live.GetName()
	}
	return i < len(aw.Status.ComponentStatus) && aw.Status.ComponentStatus[i].Name == live.GetName() &&
		aw.Status.ComponentStatus[i].Kind == live.GetKind()
}

// fits tells whether the live object runs no more than the component's pod
// sets count: at each pod set's path a pod template asking for what the
// component's does (a Pod's own requests are left out: LimitRange defaults
// them, and they can't be raised but by a resize), and, for the kinds the
// AppWrapper project infers, no more replicas.
func fits(c component, live *unstructured.Unstructured) bool {
	isPod := live.GroupVersionKind().GroupKind() == corev1.SchemeGroupVersion.WithKind("Pod").GroupKind()
	for _, ps := range c.podSets {
		want, err := awutils.GetPodTemplateSpec(c.template, ps.Path)
		if err != nil {
			return false
		}
		have, err := awutils.GetPodTemplateSpec(live, ps.Path)
		if err != nil {
			return false
		}
		if !isPod && !integration.SamePodRequests(&have.Spec, &want.Spec) {
			return false
		}
	}
	inferred, err := awutils.InferPodSets(live)
	if err != nil {
		return false
	}
	for _, now := range inferred {
		allowed := false
		for _, ps := range c.podSets {
			if ps.Path == now.Path && awutils.Replicas(now) <= awutils.Replicas(ps) {
				allowed = true
			}
		}
		if !allowed {
			return false
		}
	}
	return true
}
