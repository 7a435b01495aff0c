package kinds

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/sluicehq/sluice/internal/integration"
)

// ResizeGuardWebhook refuses in-place resizes of the Pods a queued
// Workload counts, whichever kind's they are: it is on whenever any
// integration is.
const ResizeGuardWebhook = "vpodresize.kueue.x-k8s.io"

// isPod says whether r is the core Pod's integration: the kinds queued
// through their Pods need its webhooks.
func isPod(r integration.Registration) bool {
	return r.GVK.GroupKind() == schema.GroupKind{Kind: "Pod"}
}

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
	if isPod(r) {
		names = append(names, ResizeGuardWebhook)
	}
	return names
}

// ownerOfWebhook is the registered kind whose objects the generated
// webhook entry intercepts.
func ownerOfWebhook(name string) (integration.Registration, bool) {
	for _, r := range All() {
		if slices.Contains(webhookNames(r), name) {
			return r, true
		}
	}
	return integration.Registration{}, false
}

// FrameworkOfWebhook is the integration (its integrations.frameworks name)
// whose objects the generated webhook entry intercepts; false for the
// webhooks of the kueue.x-k8s.io kinds, which always serve. The manager
// drops the entries of disabled integrations at startup, and the Helm
// chart renders only those of the integrations it configures.
func FrameworkOfWebhook(name string) (string, bool) {
	owner, ok := ownerOfWebhook(name)
	return owner.Framework, ok
}

// FrameworksOfWebhook are the integrations any of which turns the
// generated webhook entry on: its own; for the pod webhooks, the kinds
// queued through their Pods; for a kind's webhooks, the kinds that run as
// it (a TrainJob as a JobSet: the JobSet webhooks keep such a JobSet
// within its job's admission); for the resize guard, every kind.
func FrameworksOfWebhook(name string) ([]string, bool) {
	owner, ok := ownerOfWebhook(name)
	if !ok {
		return nil, false
	}
	if name == ResizeGuardWebhook {
		return Frameworks(), true
	}
	out := []string{owner.Framework}
	for _, r := range All() {
		switch {
		case r.ThroughPods && isPod(owner):
			out = append(out, r.Framework)
		case r.Queued != nil && r.Queued.RunsAs != nil && r.Queued.RunsAs.GVK.GroupKind() == owner.GVK.GroupKind():
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

// ValidateFrameworks refuses integrations.frameworks that enable a kind
// without the kind it is queued through (a RayService without the
// RayClusters KubeRay makes for it): those would run unqueued.
func ValidateFrameworks(frameworks []string) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("integrations", "frameworks")
	for _, r := range All() {
		if r.QueuedThrough != "" && slices.Contains(frameworks, r.Framework) && !slices.Contains(frameworks, r.QueuedThrough) {
			errs = append(errs, field.Invalid(path, frameworks, fmt.Sprintf("%s needs %s: a %s is queued through the %ss its controller creates",
				r.Framework, r.QueuedThrough, r.GVK.Kind, kindOf(r.QueuedThrough))))
		}
	}
	return errs
}

// kindOf is the kind of the registered framework, or the framework itself.
func kindOf(framework string) string {
	for _, r := range All() {
		if r.Framework == framework {
			return r.GVK.Kind
		}
	}
	return framework
}
