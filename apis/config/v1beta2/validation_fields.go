package v1beta2

import (
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func validateWaitForPodsReady(w *WaitForPodsReady) field.ErrorList {
	if w == nil {
		return nil
	}
	var errs field.ErrorList
	p := field.NewPath("waitForPodsReady")
	if w.Timeout.Duration <= 0 {
		errs = append(errs, field.Invalid(p.Child("timeout"), w.Timeout.Duration.String(), "must be positive"))
	}
	if w.RecoveryTimeout != nil && w.RecoveryTimeout.Duration < 0 {
		errs = append(errs, field.Invalid(p.Child("recoveryTimeout"), w.RecoveryTimeout.Duration.String(), "must not be negative"))
	}
	if rs := w.RequeuingStrategy; rs != nil {
		rp := p.Child("requeuingStrategy")
		if rs.Timestamp != nil && *rs.Timestamp != CreationTimestamp && *rs.Timestamp != EvictionTimestamp {
			errs = append(errs, field.NotSupported(rp.Child("timestamp"), *rs.Timestamp, []RequeuingTimestamp{CreationTimestamp, EvictionTimestamp}))
		}
		for name, v := range map[string]*int32{"backoffLimitCount": rs.BackoffLimitCount, "backoffBaseSeconds": rs.BackoffBaseSeconds, "backoffMaxSeconds": rs.BackoffMaxSeconds} {
			if v != nil && *v < 0 {
				errs = append(errs, field.Invalid(rp.Child(name), *v, "must not be negative"))
			}
		}
	}
	return errs
}

func validateIntegrationExtras(in *Integrations) field.ErrorList {
	if in == nil {
		return nil
	}
	var errs field.ErrorList
	p := field.NewPath("integrations", "labelKeysToCopy")
	for i, key := range in.LabelKeysToCopy {
		for _, msg := range validation.IsQualifiedName(key) {
			errs = append(errs, field.Invalid(p.Index(i), key, msg))
		}
	}
	ep := field.NewPath("integrations", "externalFrameworks")
	for i, name := range in.ExternalFrameworks {
		if strings.Count(name, ".") < 2 {
			errs = append(errs, field.Invalid(ep.Index(i), name, "must be Kind.version.group, e.g. Foo.v1.example.com"))
		}
	}
	return errs
}

func validateResources(r *Resources) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	p := field.NewPath("resources")
	if s := r.QuotaCheckStrategy; s != nil {
		if *s != QuotaCheckBlockUndeclared && *s != QuotaCheckIgnoreUndeclared {
			errs = append(errs, field.NotSupported(p.Child("quotaCheckStrategy"), *s, []QuotaCheckStrategy{QuotaCheckBlockUndeclared, QuotaCheckIgnoreUndeclared}))
		} else if *s == QuotaCheckIgnoreUndeclared && len(r.ExcludeResourcePrefixes) > 0 {
			errs = append(errs, field.Invalid(p.Child("quotaCheckStrategy"), *s, "excludeResourcePrefixes is not allowed with IgnoreUndeclared"))
		}
	}
	for i, prefix := range r.ExcludeResourcePrefixes {
		if prefix == "" {
			errs = append(errs, field.Invalid(p.Child("excludeResourcePrefixes").Index(i), prefix, "must not be empty: it would exclude every resource"))
		}
	}
	tp := p.Child("transformations")
	inputs := map[string]bool{}
	for i, t := range r.Transformations {
		ip := tp.Index(i)
		switch {
		case t.Input == "":
			errs = append(errs, field.Required(ip.Child("input"), "the resource to transform"))
		case inputs[string(t.Input)]:
			errs = append(errs, field.Duplicate(ip.Child("input"), t.Input))
		}
		inputs[string(t.Input)] = true
		if t.Strategy != nil && *t.Strategy != Retain && *t.Strategy != Replace {
			errs = append(errs, field.NotSupported(ip.Child("strategy"), *t.Strategy, []ResourceTransformationStrategy{Retain, Replace}))
		}
		for name, q := range t.Outputs {
			if q.Sign() < 0 {
				errs = append(errs, field.Invalid(ip.Child("outputs").Key(string(name)), q.String(), "must not be negative"))
			}
		}
	}
	return errs
}

func validateRetention(r *ObjectRetentionPolicies) field.ErrorList {
	if r == nil || r.Workloads == nil {
		return nil
	}
	var errs field.ErrorList
	p := field.NewPath("objectRetentionPolicies", "workloads")
	if d := r.Workloads.AfterFinished; d != nil && d.Duration < 0 {
		errs = append(errs, field.Invalid(p.Child("afterFinished"), d.Duration.String(), "must not be negative"))
	}
	if d := r.Workloads.AfterDeactivatedByKueue; d != nil && d.Duration < 0 {
		errs = append(errs, field.Invalid(p.Child("afterDeactivatedByKueue"), d.Duration.String(), "must not be negative"))
	}
	return errs
}

func validateFeatureGates(gates map[string]bool) field.ErrorList {
	var errs field.ErrorList
	for _, name := range slices.Sorted(maps.Keys(gates)) {
		if !slices.Contains(kueueFeatureGates, name) {
			errs = append(errs, field.Invalid(field.NewPath("featureGates").Key(name), name, "not a Kueue feature gate"))
		}
	}
	return errs
}

func validateController(c *ControllerConfigurationSpec) field.ErrorList {
	if c == nil {
		return nil
	}
	var errs field.ErrorList
	p := field.NewPath("controller")
	for _, kind := range slices.Sorted(maps.Keys(c.GroupKindConcurrency)) {
		if n := c.GroupKindConcurrency[kind]; n < 1 {
			errs = append(errs, field.Invalid(p.Child("groupKindConcurrency").Key(kind), n, "must be at least 1"))
		}
	}
	if c.CacheSyncTimeout != nil && *c.CacheSyncTimeout <= 0 {
		errs = append(errs, field.Invalid(p.Child("cacheSyncTimeout"), c.CacheSyncTimeout.String(), "must be positive"))
	}
	return errs
}

func validateMultiKueue(mk *MultiKueue) field.ErrorList {
	if mk == nil {
		return nil
	}
	var errs field.ErrorList
	// A step of no workers would nominate none: refused, not read as
	// "all at once".
	if c := mk.IncrementalDispatcherConfig; c != nil && c.StepSize != nil && *c.StepSize <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("multiKueue", "incrementalDispatcherConfig", "stepSize"), *c.StepSize, "must be positive"))
	}
	known := []string{MultiKueueDispatcherModeAllAtOnce, MultiKueueDispatcherModeIncremental}
	if mk.DispatcherName != nil && !slices.Contains(known, *mk.DispatcherName) {
		errs = append(errs, field.NotSupported(field.NewPath("multiKueue", "dispatcherName"), *mk.DispatcherName, known))
	}
	return errs
}
