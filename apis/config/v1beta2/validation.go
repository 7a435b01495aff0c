package v1beta2

import (
	"fmt"
	"maps"
	"slices"

	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// KueueFrameworks are the integrations.frameworks names Kueue's
// configuration accepts, each with the CustomResourceDefinition that
// serves its kind ("" for a built-in kind). Which of them sluice drives is
// its kind registry's to say (internal/integration/kinds); the manager
// refuses to start with one it does not drive while the cluster serves the
// kind, since sluice would neither suspend those jobs nor count their
// pods, and they would run outside quota.
var KueueFrameworks = map[string]string{
	FrameworkBatchJob:                       "",
	FrameworkPod:                            "",
	FrameworkDeployment:                     "",
	FrameworkStatefulSet:                    "",
	FrameworkJobSet:                         "jobsets.jobset.x-k8s.io",
	FrameworkRayJob:                         "rayjobs.ray.io",
	FrameworkRayCluster:                     "rayclusters.ray.io",
	FrameworkRayService:                     "rayservices.ray.io",
	FrameworkLeaderWorkerSet:                "leaderworkersets.leaderworkerset.x-k8s.io",
	FrameworkMPIJob:                         "mpijobs.kubeflow.org",
	FrameworkTrainJob:                       "trainjobs.trainer.kubeflow.org",
	FrameworkAppWrapper:                     "appwrappers.workload.codeflare.dev",
	"kubeflow.org/paddlejob":                "paddlejobs.kubeflow.org",
	"kubeflow.org/pytorchjob":               "pytorchjobs.kubeflow.org",
	"kubeflow.org/tfjob":                    "tfjobs.kubeflow.org",
	"kubeflow.org/xgboostjob":               "xgboostjobs.kubeflow.org",
	"kubeflow.org/jaxjob":                   "jaxjobs.kubeflow.org",
	"sparkoperator.k8s.io/sparkapplication": "sparkapplications.sparkoperator.k8s.io",
}

func validateFramework(fw string, path *field.Path) *field.Error {
	if _, known := KueueFrameworks[fw]; known {
		return nil
	}
	return field.NotSupported(path, fw, slices.Sorted(maps.Keys(KueueFrameworks)))
}

// Validate checks a defaulted configuration; each error names its field.
func Validate(c *Configuration) field.ErrorList {
	var errs field.ErrorList
	if c.Namespace != nil {
		for _, msg := range validation.IsDNS1123Label(*c.Namespace) {
			errs = append(errs, field.Invalid(field.NewPath("namespace"), *c.Namespace, msg))
		}
	}
	if c.ManagedJobsNamespaceSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(c.ManagedJobsNamespaceSelector,
			metav1validation.LabelSelectorValidationOptions{}, field.NewPath("managedJobsNamespaceSelector"))...)
	}
	if c.Integrations != nil {
		fwPath := field.NewPath("integrations", "frameworks")
		seen := map[string]bool{}
		for i, fw := range c.Integrations.Frameworks {
			if err := validateFramework(fw, fwPath.Index(i)); err != nil {
				errs = append(errs, err)
			}
			if seen[fw] {
				errs = append(errs, field.Duplicate(fwPath.Index(i), fw))
			}
			seen[fw] = true
		}
	}
	if cc := c.ClientConnection; cc != nil {
		ccPath := field.NewPath("clientConnection")
		if cc.QPS != nil && *cc.QPS <= 0 {
			errs = append(errs, field.Invalid(ccPath.Child("qps"), *cc.QPS, "must be greater than 0"))
		}
		if cc.Burst != nil && *cc.Burst < 1 {
			errs = append(errs, field.Invalid(ccPath.Child("burst"), *cc.Burst, "must be at least 1"))
		}
	}
	errs = append(errs, validateWaitForPodsReady(c.WaitForPodsReady)...)
	if w := c.Webhook; w.Port != nil && (*w.Port < 1 || *w.Port > 65535) {
		errs = append(errs, field.Invalid(field.NewPath("webhook", "port"), *w.Port, "must be between 1 and 65535"))
	}
	if icm := c.InternalCertManagement; icm != nil {
		p := field.NewPath("internalCertManagement")
		if icm.WebhookServiceName != nil {
			for _, msg := range validation.IsDNS1035Label(*icm.WebhookServiceName) {
				errs = append(errs, field.Invalid(p.Child("webhookServiceName"), *icm.WebhookServiceName, msg))
			}
		}
		if icm.WebhookSecretName != nil {
			for _, msg := range validation.IsDNS1123Subdomain(*icm.WebhookSecretName) {
				errs = append(errs, field.Invalid(p.Child("webhookSecretName"), *icm.WebhookSecretName, msg))
			}
		}
	}
	if le := c.LeaderElection; le != nil {
		p := field.NewPath("leaderElection")
		if le.ResourceLock != "" && le.ResourceLock != "leases" {
			errs = append(errs, field.NotSupported(p.Child("resourceLock"), le.ResourceLock, []string{"leases"}))
		}
		if le.LeaseDuration != nil && le.RenewDeadline != nil && le.RenewDeadline.Duration >= le.LeaseDuration.Duration {
			errs = append(errs, field.Invalid(p.Child("renewDeadline"), le.RenewDeadline.Duration.String(),
				fmt.Sprintf("must be shorter than leaseDuration (%s)", le.LeaseDuration.Duration)))
		}
	}
	if fs := c.FairSharing; fs != nil {
		allowed := []PreemptionStrategy{LessThanOrEqualToFinalShare, LessThanInitialShare}
		for i, s := range fs.PreemptionStrategies {
			if !slices.Contains(allowed, s) {
				errs = append(errs, field.NotSupported(field.NewPath("fairSharing", "preemptionStrategies").Index(i), s, allowed))
			}
		}
	}
	errs = append(errs, validateIntegrationExtras(c.Integrations)...)
	errs = append(errs, validateResources(c.Resources)...)
	errs = append(errs, validateRetention(c.ObjectRetentionPolicies)...)
	errs = append(errs, validateFeatureGates(c.FeatureGates)...)
	errs = append(errs, validateController(c.Controller)...)
	errs = append(errs, validateMultiKueue(c.MultiKueue)...)
	return errs
}
