package kinds

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	"github.com/sluicehq/sluice/apis/scheme"
	"github.com/sluicehq/sluice/config"
)

// Every registered kind has one of Kueue's framework names, and the
// CustomResourceDefinition Kueue's list gives it: a kind under another
// name could not be enabled, and with another CRD the manager's guard
// would watch for the wrong one. What sluice does not register the guard
// refuses while its kind is served.
func TestRegisteredFrameworksAreKueues(t *testing.T) {
	for _, r := range All() {
		crd, known := configapi.KueueFrameworks[r.Framework]
		if !known || crd != r.CRD {
			t.Errorf("%s (CRD %q): Kueue's list has %q (known %v)", r.Framework, r.CRD, crd, known)
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

// The webhook entries derived for the registered kinds are the generated
// ones: each kind's m<kind>/v<kind> entries exist in config/webhook, and
// every generated entry is either a kind's or intercepts only the
// kueue.x-k8s.io API (those always serve). An entry of a kind's that the
// registry did not derive would serve with its integration disabled, or
// be left out of the Helm chart's scoping.
func TestDerivedWebhooksAreTheGenerated(t *testing.T) {
	validating, err := config.ValidatingWebhooks()
	if err != nil {
		t.Fatal(err)
	}
	mutating, err := config.MutatingWebhooks()
	if err != nil {
		t.Fatal(err)
	}
	generated := map[string][]admissionv1.RuleWithOperations{}
	for _, c := range validating {
		for _, w := range c.Webhooks {
			generated[w.Name] = w.Rules
		}
	}
	for _, c := range mutating {
		for _, w := range c.Webhooks {
			generated[w.Name] = w.Rules
		}
	}
	for _, r := range All() {
		for _, name := range webhookNames(r) {
			rules, ok := generated[name]
			if !ok {
				t.Errorf("%s: webhook %s derived, not generated", r.Framework, name)
				continue
			}
			// A webhook scoped to a framework whose objects it does not
			// intercept would be off while its own kind's jobs run.
			if len(rules) == 0 {
				t.Errorf("%s: webhook %s intercepts nothing", r.Framework, name)
			}
			for _, rule := range rules {
				if !slices.Equal(rule.APIGroups, []string{r.GVK.Group}) {
					t.Errorf("%s: webhook %s intercepts the API groups %q, its kind is in %q",
						r.Framework, name, rule.APIGroups, r.GVK.Group)
				}
			}
		}
	}
	for name, rules := range generated {
		if _, ok := FrameworkOfWebhook(name); ok {
			continue
		}
		for _, rule := range rules {
			if !slices.Equal(rule.APIGroups, []string{"kueue.x-k8s.io"}) {
				t.Errorf("webhook %s intercepts %v, yet belongs to no registered kind", name, rule.APIGroups)
			}
		}
	}
}

// Nothing but this package lists the kinds: outside it and the API
// packages, no file imports two kinds' packages or names three frameworks.
// Adding a kind is its package plus one line in All.
func TestNoOtherListOfKinds(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	frameworkName := regexp.MustCompile(`\b(?:configapi|v1beta2|config)\.Framework[A-Z]\w*`)
	// Every package under internal/integration but this one is a kind's.
	kindImport := regexp.MustCompile(`"github.com/sluicehq/sluice/internal/integration/([a-z]+)"`)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch rel {
			case "apis", "hack", "bin", "dist", ".git", filepath.Join("internal", "integration", "kinds"):
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		imported, named := map[string]bool{}, map[string]bool{}
		for _, m := range kindImport.FindAllStringSubmatch(string(data), -1) {
			if m[1] != "kinds" {
				imported[m[1]] = true
			}
		}
		for _, m := range frameworkName.FindAllString(string(data), -1) {
			named[m] = true
		}
		if len(imported) >= 2 || len(named) >= 3 {
			t.Errorf("%s lists kinds (imports %v, names %v): derive it from kinds.All", rel,
				slices.Sorted(maps.Keys(imported)), slices.Sorted(maps.Keys(named)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
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
			if errs := ValidateFrameworks([]string{r.Framework}); len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), r.QueuedThrough) {
				t.Errorf("%s without %s: the configuration accepts it, and its objects' children would run unqueued", r.Framework, r.QueuedThrough)
			}
			if errs := ValidateFrameworks([]string{r.Framework, r.QueuedThrough}); len(errs) > 0 {
				t.Errorf("%s with %s: %v", r.Framework, r.QueuedThrough, errs)
			}
		}
		// The Helm chart and the manager turn the pod webhooks on for these.
		if frameworks, _ := FrameworksOfWebhook("mpod.kueue.x-k8s.io"); r.ThroughPods && !slices.Contains(frameworks, r.Framework) {
			t.Errorf("%s is queued through its Pods, and does not turn the pod webhooks on", r.Framework)
		}
	}
}

// The kinds that run as a JobSet keep the JobSet webhooks on: those keep
// such a JobSet within its job's admission (the Helm chart and the
// manager scope them with FrameworksOfWebhook).
func TestKindsThatRunAsAJobSetKeepItsWebhooksOn(t *testing.T) {
	frameworks, _ := FrameworksOfWebhook("mjobset.kueue.x-k8s.io")
	runsAs := 0
	for _, r := range All() {
		if r.Queued == nil || r.Queued.RunsAs == nil {
			continue
		}
		runsAs++
		if r.Queued.RunsAs.GVK.GroupKind().String() != "JobSet.jobset.x-k8s.io" {
			t.Errorf("%s runs as %s: only JobSet's webhooks keep what a job runs as within its admission", r.Framework, r.Queued.RunsAs.GVK)
		}
		if !slices.Contains(frameworks, r.Framework) {
			t.Errorf("%s runs as a JobSet and does not turn the JobSet webhooks on (%v)", r.Framework, frameworks)
		}
	}
	if runsAs == 0 {
		t.Error("no kind runs as a JobSet: the TrainJob does")
	}
}
