package config

import (
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/sluicehq/sluice/apis/config/v1beta2"
)

// ControllerGroupKinds are the keys of controller.groupKindConcurrency
// sluice has a controller for.
var ControllerGroupKinds = []string{
	"Workload.kueue.x-k8s.io", "ClusterQueue.kueue.x-k8s.io", "LocalQueue.kueue.x-k8s.io",
	"Cohort.kueue.x-k8s.io", "ResourceFlavor.kueue.x-k8s.io", "Namespace",
	"Job.batch", "Pod",
}

// actedOnGates are the feature gates whose setting changes what sluice
// does; the others are reported as not acted on.
var actedOnGates = []string{v1beta2.DisableWaitForPodsReadyGate, v1beta2.VisibilityOnDemandGate, v1beta2.MultiKueueGate, v1beta2.MultiKueueAllowInsecureKubeconfigsGate}

// refused are the settings sluice cannot honour and must not ignore:
// ignoring them would let work run outside quota.
func refused(cfg *v1beta2.Configuration) field.ErrorList {
	var errs field.ErrorList
	if r := cfg.Resources; r != nil && len(r.DeviceClassMappings) > 0 {
		errs = append(errs, field.Forbidden(field.NewPath("resources", "deviceClassMappings"),
			"sluice does not count dynamic resource claims yet: the devices they claim would be used outside quota"))
	}
	return errs
}

// NotActedOn lists the settings of a file that sluice accepts and does not
// act on yet, each with what that means; the manager logs them once at
// startup. None of them lets work run outside quota (those are refused).
// implemented are the frameworks sluice drives (its kind registry's).
func (f *File) NotActedOn(implemented []string) []string {
	w := f.Written
	var out []string
	add := func(cond bool, path, why string) {
		if cond {
			out = append(out, path+": "+why)
		}
	}
	if mk := w.MultiKueue; mk != nil {
		add(len(mk.ExternalFrameworks) > 0, "multiKueue.externalFrameworks", "sluice dispatches the kinds it integrates (batch Jobs); the workloads of other kinds are rejected by the MultiKueue check")
		add(mk.ClusterProfile != nil, "multiKueue.clusterProfile", "ClusterProfiles are not supported: MultiKueueClusters that name one are inactive")
	}
	add(w.AdmissionFairSharing != nil, "admissionFairSharing", "workloads are ordered by priority and creation, not by their LocalQueue's usage")
	add(w.TLS != nil, "tls", "the servers use Go's default TLS settings")
	add(len(w.Metrics.CustomLabels) > 0, "metrics.customLabels", "metrics carry no custom labels yet")
	if r := w.Resources; r != nil {
		add(r.QuotaCheckStrategy != nil && *r.QuotaCheckStrategy == v1beta2.QuotaCheckIgnoreUndeclared, "resources.quotaCheckStrategy",
			"IgnoreUndeclared is not implemented: a workload requesting a resource its ClusterQueue does not cover keeps waiting (BlockUndeclared)")
	}
	if ig := w.Integrations; ig != nil {
		for i, fw := range ig.Frameworks {
			if crd := v1beta2.KueueFrameworks[fw]; !slices.Contains(implemented, fw) {
				out = append(out, fmt.Sprintf("integrations.frameworks[%d]: %s is not implemented yet; allowed only while the cluster does not serve %s", i, fw, crd))
			}
		}
	}
	if c := w.Controller; c != nil {
		for _, gk := range slices.Sorted(maps.Keys(c.GroupKindConcurrency)) {
			add(!slices.Contains(ControllerGroupKinds, gk), "controller.groupKindConcurrency["+gk+"]", "sluice has no controller for that kind")
		}
	}
	for _, gate := range slices.Sorted(maps.Keys(w.FeatureGates)) {
		add(!slices.Contains(actedOnGates, gate), "featureGates["+gate+"]", "sluice's behaviour does not depend on this gate")
	}
	for _, d := range f.Dropped {
		out = append(out, d+": a v1beta1 field, dropped as Kueue drops it")
	}
	return out
}
