package kinds

import (
	"slices"
	"strings"
	"testing"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	"github.com/sluicehq/sluice/apis/scheme"
	"github.com/sluicehq/sluice/config"
)

// The configuration accepts as implemented exactly the registered
// frameworks: a kind registered but refused by the configuration could not
// be enabled, and one accepted but not registered would run unqueued.
func TestRegisteredFrameworksAreTheImplementedOnes(t *testing.T) {
	var registered []string
	for _, r := range All() {
		registered = append(registered, r.Framework)
	}
	slices.Sort(registered)
	implemented := slices.Sorted(slices.Values(configapi.ImplementedFrameworks))
	if !slices.Equal(registered, implemented) {
		t.Fatalf("registered frameworks %v, the configuration implements %v", registered, implemented)
	}
	for _, r := range All() {
		if _, known := configapi.NotYetImplementedFrameworks[r.Framework]; known {
			t.Errorf("%s is registered and still listed as not implemented", r.Framework)
		}
	}
}

// Every registered kind is in the scheme the manager and its clients use,
// and its objects are of that kind.
func TestRegisteredKindsAreInTheScheme(t *testing.T) {
	for _, r := range All() {
		gvks, _, err := scheme.Scheme.ObjectKinds(r.NewObject())
		if err != nil || !slices.Contains(gvks, r.GVK) {
			t.Errorf("%s: the scheme knows %v (%v), want %s", r.Framework, gvks, err, r.GVK)
		}
		if r.Queued != nil && (r.Queued.GVK != r.GVK || r.Queued.Framework != r.Framework) {
			t.Errorf("%s: its queued kind is %s/%s", r.Framework, r.Queued.Framework, r.Queued.GVK)
		}
	}
}

// Every registered kind's webhooks are scoped with its framework: their
// names follow m<kind>/v<kind>.kueue.x-k8s.io.
func TestRegisteredWebhooksAreScoped(t *testing.T) {
	for _, r := range All() {
		for _, prefix := range []string{"m", "v"} {
			name := prefix + strings.ToLower(r.GVK.Kind) + ".kueue.x-k8s.io"
			if fw, ok := config.FrameworkOfWebhook(name); !ok || fw != r.Framework {
				t.Errorf("webhook %s: scoped as %q (%v), want %s", name, fw, ok, r.Framework)
			}
		}
	}
}

// A kind is queued either by the generic Reconciler or through its Pods,
// never both nor neither (the pod integration aside, which is the Pods):
// one queued through its Pods that did not say so would run unqueued
// without "pod" in the configuration.
func TestEveryKindIsQueuedOneWay(t *testing.T) {
	for _, r := range All() {
		if r.Framework == configapi.FrameworkPod {
			continue
		}
		if (r.Queued != nil) == r.ThroughPods {
			t.Errorf("%s: queued by the Reconciler %v, through its Pods %v: want exactly one", r.Framework, r.Queued != nil, r.ThroughPods)
		}
		// The Helm chart renders the pod webhooks for these.
		if r.ThroughPods != slices.Contains(config.ThroughPodsFrameworks, r.Framework) {
			t.Errorf("%s: through its Pods %v, but config.ThroughPodsFrameworks is %v", r.Framework, r.ThroughPods, config.ThroughPodsFrameworks)
		}
	}
}
