package kinds

import (
	"slices"
	"strings"

	"github.com/sluicehq/sluice/internal/integration"
)

// ResizeGuardWebhook refuses in-place resizes of the Pods a queued
// Workload counts, whichever kind's they are: it is on whenever any
// integration is.
const ResizeGuardWebhook = "vpodresize.kueue.x-k8s.io"

// webhookNames are the generated webhook entries that intercept a kind's
// objects, named m<kind> and v<kind> as Kueue names them (a kind queued
// through another only validates: no m<kind>); the pod integration also
// owns the resize guard.
func webhookNames(r integration.Registration) []string {
	kind := strings.ToLower(r.GVK.Kind) + ".kueue.x-k8s.io"
	names := []string{"v" + kind}
	if r.QueuedThrough == "" {
		names = append(names, "m"+kind)
	}
	if r.Framework == podFramework() {
		names = append(names, ResizeGuardWebhook)
	}
	return names
}

// podFramework is the pod integration's framework: the kind whose webhooks
// the kinds queued through their Pods need.
func podFramework() string {
	for _, r := range All() {
		if r.GVK.Group == "" && r.GVK.Kind == "Pod" {
			return r.Framework
		}
	}
	return ""
}

// FrameworkOfWebhook is the integration (its integrations.frameworks name)
// whose objects the generated webhook entry intercepts; false for the
// webhooks of the kueue.x-k8s.io kinds, which always serve. The manager
// drops the entries of disabled integrations at startup, and the Helm
// chart renders only those of the integrations it configures.
func FrameworkOfWebhook(name string) (string, bool) {
	for _, r := range All() {
		if slices.Contains(webhookNames(r), name) {
			return r.Framework, true
		}
	}
	return "", false
}

// FrameworksOfWebhook are the integrations any of which turns the
// generated webhook entry on: its own; for the pod webhooks, the kinds
// queued through their Pods; for a kind's webhooks, the kinds that run as
// it (a TrainJob as a JobSet: the JobSet webhooks keep such a JobSet
// within its job's admission); for the resize guard, every kind.
func FrameworksOfWebhook(name string) ([]string, bool) {
	fw, ok := FrameworkOfWebhook(name)
	if !ok {
		return nil, false
	}
	if name == ResizeGuardWebhook {
		return Frameworks(), true
	}
	out := []string{fw}
	for _, r := range All() {
		switch {
		case r.ThroughPods && fw == podFramework():
			out = append(out, r.Framework)
		case r.Queued != nil && r.Queued.RunsAs != nil && frameworkOf(r.Queued.RunsAs.GVK.GroupKind().String()) == fw:
			out = append(out, r.Framework)
		}
	}
	return out, true
}

// Frameworks are the registered kinds' framework names, in the registry's
// order.
func Frameworks() []string {
	out := make([]string, 0, len(All()))
	for _, r := range All() {
		out = append(out, r.Framework)
	}
	return out
}

// ThroughPods are the frameworks of the kinds queued through their Pods:
// each turns the pod webhooks on.
func ThroughPods() []string {
	var out []string
	for _, r := range All() {
		if r.ThroughPods {
			out = append(out, r.Framework)
		}
	}
	return out
}

// frameworkOf is the framework of the registered kind named by its group
// kind (Kind.group), or "".
func frameworkOf(groupKind string) string {
	for _, r := range All() {
		if r.GVK.GroupKind().String() == groupKind {
			return r.Framework
		}
	}
	return ""
}

// BuiltIn are the frameworks of the kinds every cluster serves (no
// CustomResourceDefinition: batch Jobs, Pods, Deployments, StatefulSets).
func BuiltIn() []string {
	var out []string
	for _, r := range All() {
		if r.CRD == "" {
			out = append(out, r.Framework)
		}
	}
	return out
}

// OfGroups are the frameworks of the kinds in these API groups (a
// project's: ray.io has RayJob, RayCluster and RayService).
func OfGroups(groups ...string) []string {
	var out []string
	for _, r := range All() {
		if slices.Contains(groups, r.GVK.Group) {
			out = append(out, r.Framework)
		}
	}
	return out
}
