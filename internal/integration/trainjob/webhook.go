package trainjob

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/sluicehq/sluice/internal/integration"
)

// +kubebuilder:webhook:path=/mutate-trainer-kubeflow-org-v1alpha1-trainjob,mutating=true,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=trainer.kubeflow.org,resources=trainjobs,verbs=create;update,versions=v1alpha1,name=mtrainjob.kueue.x-k8s.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-trainer-kubeflow-org-v1alpha1-trainjob,mutating=false,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=trainer.kubeflow.org,resources=trainjobs,verbs=create;update,versions=v1alpha1,name=vtrainjob.kueue.x-k8s.io,admissionReviewVersions=v1

// newWebhook is the TrainJob webhook: the shared plumbing alone. A
// TrainJob has no pod template of its own to check (they are its
// runtime's), and what it runs is checked where it runs: the JobSet
// webhook keeps the TrainJob's JobSet within its admission, whatever
// changed in the TrainJob or its runtime.
func newWebhook(deps integration.Deps) *integration.JobWebhook[*unstructured.Unstructured] {
	return &integration.JobWebhook[*unstructured.Unstructured]{
		Enabled: deps.Enabled, Kind: Kind, Policy: deps.Policy, Reader: deps.Reader, APIReader: deps.APIReader,
		Templates: func(*unstructured.Unstructured) []integration.Template { return nil },
	}
}
