package appwrapper

import (
	awv1beta2 "github.com/project-codeflare/appwrapper/api/v1beta2"
	awutils "github.com/project-codeflare/appwrapper/pkg/utils"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/sluicehq/sluice/internal/integration"
)

// +kubebuilder:webhook:path=/mutate-workload-codeflare-dev-v1beta2-appwrapper,mutating=true,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=workload.codeflare.dev,resources=appwrappers,verbs=create;update,versions=v1beta2,name=mappwrapper.kueue.x-k8s.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-workload-codeflare-dev-v1beta2-appwrapper,mutating=false,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=workload.codeflare.dev,resources=appwrappers,verbs=create;update,versions=v1beta2,name=vappwrapper.kueue.x-k8s.io,admissionReviewVersions=v1

// maxPodSets is the most pod sets a Workload holds (its API's limit).
const maxPodSets = 8

var componentsPath = field.NewPath("spec", "components")

// newWebhook is the AppWrapper webhook: the shared plumbing, with the
// rules of the AppWrapper project's own webhook on every AppWrapper sluice
// queues (it need not be installed, and what it refuses is what would let
// pods run uncounted), and a running AppWrapper sluice started that asks
// for more suspended in the same update.
func newWebhook(deps integration.Deps) *integration.JobWebhook[*awv1beta2.AppWrapper] {
	return &integration.JobWebhook[*awv1beta2.AppWrapper]{
		Enabled: deps.Enabled, Kind: Kind, Policy: deps.Policy, Reader: deps.Reader, APIReader: deps.APIReader,
		Templates:   templates,
		QueuedRules: validate,
		DefaultUpdate: func(old, aw *awv1beta2.AppWrapper) {
			integration.SuspendIfGrown(&AppWrapper{old}, &AppWrapper{aw})
		},
	}
}

// templates are the components' pod templates (copies: the AppWrapper
// holds them as raw objects), for the amounts and standalone checks.
func templates(aw *awv1beta2.AppWrapper) []integration.Template {
	var out []integration.Template
	for i := range aw.Spec.Components {
		c, err := readComponent(&aw.Spec.Components[i])
		if err != nil {
			continue // validate names the component
		}
		for _, ps := range c.podSets {
			tmpl, err := awutils.GetPodTemplateSpec(c.template, ps.Path)
			if err != nil {
				continue
			}
			out = append(out, integration.Template{Meta: &tmpl.ObjectMeta, Pod: &tmpl.Spec, Path: componentsPath.Index(i).Child("template")})
		}
	}
	return out
}

// validate: each component's template decodes, is no AppWrapper, lives in
// the AppWrapper's namespace, has pod sets whose paths lead to pod
// templates and that agree with what the AppWrapper project infers for
// the kinds it knows; and the AppWrapper has between 1 and maxPodSets pod
// sets.
func validate(aw *awv1beta2.AppWrapper) field.ErrorList {
	var errs field.ErrorList
	total := 0
	for i := range aw.Spec.Components {
		path := componentsPath.Index(i)
		c, err := readComponent(&aw.Spec.Components[i])
		if err != nil {
			errs = append(errs, field.Invalid(path.Child("template"), "", err.Error()))
			continue
		}
		if c.template.GroupVersionKind().GroupKind() == Kind.GVK.GroupKind() {
			errs = append(errs, field.Forbidden(path.Child("template"), "an AppWrapper can't wrap another: sluice counts the pods of one"))
		}
		if ns := c.template.GetNamespace(); ns != "" && ns != aw.Namespace {
			errs = append(errs, field.Forbidden(path.Child("template", "metadata", "namespace"), "a component lives in its AppWrapper's namespace"))
		}
		for j, ps := range aw.Spec.Components[i].DeclaredPodSets {
			if _, err := awutils.GetPodTemplateSpec(c.template, ps.Path); err != nil {
				errs = append(errs, field.Invalid(path.Child("podSets").Index(j).Child("path"), ps.Path, "must lead to a pod template: "+err.Error()))
			}
		}
		if inferred, err := awutils.InferPodSets(c.template); err != nil {
			errs = append(errs, field.Invalid(path.Child("template"), "", "inferring its pod sets: "+err.Error()))
		} else if err := awutils.ValidatePodSets(aw.Spec.Components[i].DeclaredPodSets, inferred); err != nil {
			errs = append(errs, field.Invalid(path.Child("podSets"), "", err.Error()))
		}
		total += len(c.podSets)
	}
	switch {
	case total == 0:
		errs = append(errs, field.Required(componentsPath, "a queued AppWrapper needs a component with pods"))
	case total > maxPodSets:
		errs = append(errs, field.TooMany(componentsPath, total, maxPodSets))
	}
	return errs
}
