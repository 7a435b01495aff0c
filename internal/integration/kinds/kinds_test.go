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
		prefixes := []string{"m", "v"}
		if r.QueuedThrough != "" {
			prefixes = []string{"v"}
		}
		for _, prefix := range prefixes {
			name := prefix + strings.ToLower(r.GVK.Kind) + ".kueue.x-k8s.io"
			if fw, ok := config.FrameworkOfWebhook(name); !ok || fw != r.Framework {
				t.Errorf("webhook %s: scoped as %q (%v), want %s", name, fw, ok, r.Framework)
			}
		}
	}
}

// A kind is queued one way: by the generic Reconciler, through its Pods,
// or through the objects of another kind its controller creates, never
// several nor none (the pod integration aside, which is the Pods): one
// queued through its Pods that did not say so would run unqueued without
// "pod" in the configuration, and one queued through another kind is
// refused by the configuration without that kind.
func TestEveryKindIsQueuedOneWay(t *testing.T) {
	byFramework := map[string]bool{}
	for _, r := range All() {
		byFramework[r.Framework] = r.Queued != nil
	}
	for _, r := range All() {
		if r.Framework == configapi.FrameworkPod {
			continue
		}
		ways := 0
		for _, way := range []bool{r.Queued != nil, r.ThroughPods, r.QueuedThrough != ""} {
			if way {
				ways++
			}
		}
		if ways != 1 {
			t.Errorf("%s: queued by the Reconciler %v, through its Pods %v, through %q: want exactly one way",
				r.Framework, r.Queued != nil, r.ThroughPods, r.QueuedThrough)
		}
		if r.QueuedThrough != "" {
			if !byFramework[r.QueuedThrough] {
				t.Errorf("%s: queued through %s, which is not a kind the Reconciler queues", r.Framework, r.QueuedThrough)
			}
			alone := &configapi.Configuration{Integrations: &configapi.Integrations{Frameworks: []string{r.Framework}}}
			configapi.SetDefaults(alone)
			if errs := configapi.Validate(alone); len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), r.QueuedThrough) {
				t.Errorf("%s without %s: the configuration accepts it, and its objects' children would run unqueued", r.Framework, r.QueuedThrough)
			}
		}
		// The Helm chart renders the pod webhooks for these.
		if r.ThroughPods != slices.Contains(config.ThroughPodsFrameworks, r.Framework) {
			t.Errorf("%s: through its Pods %v, but config.ThroughPodsFrameworks is %v", r.Framework, r.ThroughPods, config.ThroughPodsFrameworks)
		}
	}
}

// The kinds that run as a JobSet keep the JobSet webhooks on: those keep
// such a JobSet within its job's admission, and the Helm chart renders
// them for config.RunsAsJobSetFrameworks.
func TestRunsAsJobSetFrameworksAreTheRegistrys(t *testing.T) {
	var runsAsJobSet []string
	for _, r := range All() {
		if r.Queued != nil && r.Queued.RunsAs != nil {
			if r.Queued.RunsAs.GVK.GroupKind().String() != "JobSet.jobset.x-k8s.io" {
				t.Errorf("%s runs as %s: only JobSet's webhooks keep what a job runs as within its admission", r.Framework, r.Queued.RunsAs.GVK)
			}
			runsAsJobSet = append(runsAsJobSet, r.Framework)
		}
	}
	if !slices.Equal(slices.Sorted(slices.Values(runsAsJobSet)), slices.Sorted(slices.Values(config.RunsAsJobSetFrameworks))) {
		t.Errorf("kinds that run as a JobSet %v, config.RunsAsJobSetFrameworks %v", runsAsJobSet, config.RunsAsJobSetFrameworks)
	}
	for _, fw := range config.RunsAsJobSetFrameworks {
		frameworks, _ := config.FrameworksOfWebhook("mjobset.kueue.x-k8s.io")
		if !slices.Contains(frameworks, fw) {
			t.Errorf("%s does not turn the JobSet webhook on", fw)
		}
	}
}
