package config

import configapi "github.com/sluicehq/sluice/apis/config/v1beta2"

// ThroughPodsFrameworks are the integrations whose kinds are queued
// through their Pods: each turns the pod webhooks on (the registry's
// ThroughPods, which a test keeps in step).
var ThroughPodsFrameworks = []string{configapi.FrameworkDeployment, configapi.FrameworkStatefulSet, configapi.FrameworkLeaderWorkerSet}

// ResizeGuardWebhook refuses in-place resizes of the Pods a queued
// Workload counts, whichever integration's they are: it is on whenever
// any integration is.
const ResizeGuardWebhook = "vpodresize.kueue.x-k8s.io"

// RunsAsJobSetFrameworks are the integrations whose kinds run as a JobSet
// (the registry's RunsAs, which a test keeps in step): each turns the
// JobSet webhooks on, which keep such a JobSet within its job's admission.
var RunsAsJobSetFrameworks = []string{configapi.FrameworkTrainJob}

// FrameworksOfWebhook are the integrations any of which turns the
// generated webhook entry on: its own, for the pod webhooks the kinds
// queued through their Pods, and for the JobSet webhooks the kinds that
// run as a JobSet.
func FrameworksOfWebhook(name string) ([]string, bool) {
	fw, ok := FrameworkOfWebhook(name)
	if !ok {
		return nil, false
	}
	if name == ResizeGuardWebhook {
		// Every kind's Pods can be resized: served with any integration.
		return append([]string(nil), configapi.ImplementedFrameworks...), true
	}
	switch fw {
	case configapi.FrameworkPod:
		return append([]string{fw}, ThroughPodsFrameworks...), true
	case configapi.FrameworkJobSet:
		return append([]string{fw}, RunsAsJobSetFrameworks...), true
	}
	return []string{fw}, true
}

// FrameworkOfWebhook is the integration (its integrations.frameworks name)
// whose objects the generated webhook entry intercepts; false for the
// webhooks of the kueue.x-k8s.io kinds, which always serve. The manager
// drops the entries of disabled integrations at startup, and the Helm
// chart renders only those of the integrations it configures.
func FrameworkOfWebhook(name string) (string, bool) {
	switch name {
	case "mjob.kueue.x-k8s.io", "vjob.kueue.x-k8s.io":
		return configapi.FrameworkBatchJob, true
	case "mpod.kueue.x-k8s.io", "vpod.kueue.x-k8s.io", ResizeGuardWebhook:
		return configapi.FrameworkPod, true
	case "mdeployment.kueue.x-k8s.io", "vdeployment.kueue.x-k8s.io":
		return configapi.FrameworkDeployment, true
	case "mstatefulset.kueue.x-k8s.io", "vstatefulset.kueue.x-k8s.io":
		return configapi.FrameworkStatefulSet, true
	case "mjobset.kueue.x-k8s.io", "vjobset.kueue.x-k8s.io":
		return configapi.FrameworkJobSet, true
	case "mrayjob.kueue.x-k8s.io", "vrayjob.kueue.x-k8s.io":
		return configapi.FrameworkRayJob, true
	case "mraycluster.kueue.x-k8s.io", "vraycluster.kueue.x-k8s.io":
		return configapi.FrameworkRayCluster, true
	case "vrayservice.kueue.x-k8s.io":
		return configapi.FrameworkRayService, true
	case "mleaderworkerset.kueue.x-k8s.io", "vleaderworkerset.kueue.x-k8s.io":
		return configapi.FrameworkLeaderWorkerSet, true
	case "mmpijob.kueue.x-k8s.io", "vmpijob.kueue.x-k8s.io":
		return configapi.FrameworkMPIJob, true
	case "mtrainjob.kueue.x-k8s.io", "vtrainjob.kueue.x-k8s.io":
		return configapi.FrameworkTrainJob, true
	case "mappwrapper.kueue.x-k8s.io", "vappwrapper.kueue.x-k8s.io":
		return configapi.FrameworkAppWrapper, true
	}
	return "", false
}
