package v1beta2

import (
	"fmt"
	"slices"
	"strings"

	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ImplementedFrameworks are the integrations sluice drives.
var ImplementedFrameworks = []string{FrameworkBatchJob, FrameworkPod, FrameworkDeployment, FrameworkStatefulSet}

// notYetImplemented are Kueue's other framework names. Naming one is a
// startup error, not a warning: sluice would neither suspend those jobs nor
// count their pods (which it leaves to a parent it doesn't drive), so they
// would run outside quota.
var notYetImplemented = []string{
	"jobset.x-k8s.io/jobset", "kubeflow.org/mpijob", "kubeflow.org/paddlejob",
	"kubeflow.org/pytorchjob", "kubeflow.org/tfjob", "kubeflow.org/xgboostjob",
	"kubeflow.org/jaxjob", "trainer.kubeflow.org/trainjob", "ray.io/rayjob",
	"ray.io/raycluster", "ray.io/rayservice", "leaderworkerset.x-k8s.io/leaderworkerset",
	"workload.codeflare.dev/appwrapper", "sparkoperator.k8s.io/sparkapplication",
}

func validateFramework(fw string, path *field.Path) *field.Error {
	switch {
	case slices.Contains(ImplementedFrameworks, fw):
		return nil
	case slices.Contains(notYetImplemented, fw):
		err := field.NotSupported(path, fw, ImplementedFrameworks)
		err.Detail = fmt.Sprintf("sluice does not implement %s yet, and its jobs would run outside quota; remove it, or use one of the implemented frameworks: %s",
			fw, strings.Join(ImplementedFrameworks, ", "))
		return err
	}
	return field.NotSupported(path, fw, ImplementedFrameworks)
}

// ValidateTypeMeta checks apiVersion and kind.
func ValidateTypeMeta(c *Configuration) error {
	want := Group + "/" + Version
	var errs field.ErrorList
	if c.APIVersion != want {
		errs = append(errs, field.NotSupported(field.NewPath("apiVersion"), c.APIVersion, []string{want}))
	}
	if c.Kind != Kind {
		errs = append(errs, field.NotSupported(field.NewPath("kind"), c.Kind, []string{Kind}))
	}
	return errs.ToAggregate()
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
			errs = append(errs, field.Invalid(ccPath.Child("qps"), *cc.QPS, "must be greater than 0; leave unset for no client-side throttling"))
		}
		if cc.Burst != nil && *cc.Burst < 1 {
			errs = append(errs, field.Invalid(ccPath.Child("burst"), *cc.Burst, "must be at least 1"))
		}
		if cc.Burst != nil && cc.QPS == nil {
			errs = append(errs, field.Required(ccPath.Child("qps"), "burst needs qps"))
		}
	}
	if w := c.WaitForPodsReady; w != nil && w.Timeout != nil && w.Timeout.Duration <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("waitForPodsReady", "timeout"), w.Timeout.Duration.String(), "must be positive"))
	}
	if w := c.Webhook; w != nil && w.Port != nil && (*w.Port < 1 || *w.Port > 65535) {
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
		allowed := []string{"LessThanOrEqualToFinalShare", "LessThanInitialShare"}
		for i, s := range fs.PreemptionStrategies {
			if !slices.Contains(allowed, s) {
				errs = append(errs, field.NotSupported(field.NewPath("fairSharing", "preemptionStrategies").Index(i), s, allowed))
			}
		}
	}
	return errs
}
