package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/sluicehq/sluice/apis/config/v1beta2"
	"github.com/sluicehq/sluice/internal/integration/kinds"
)

const header = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
const headerV1beta1 = "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"

func TestDecode(t *testing.T) {
	cases := []struct {
		name    string
		doc     string
		wantErr []string
		check   func(t *testing.T, f *File)
	}{
		{name: "empty file gets Kueue's defaults", doc: header, check: func(t *testing.T, f *File) {
			c := f.Config
			if *c.Namespace != v1beta2.DefaultNamespace || !*c.InternalCertManagement.Enable || !*c.LeaderElection.LeaderElect {
				t.Errorf("defaults not applied: %+v", c)
			}
			if *c.ClientConnection.QPS != 300 || *c.ClientConnection.Burst != 500 {
				t.Errorf("client connection = %+v, want Kueue's 300/500", c.ClientConnection)
			}
			if !slices.Equal(c.Integrations.Frameworks, []string{v1beta2.FrameworkBatchJob}) {
				t.Errorf("frameworks = %v", c.Integrations.Frameworks)
			}
			if c.LeaderElection.ResourceNamespace != v1beta2.DefaultNamespace || c.LeaderElection.ResourceName != "c1f6bfd2.kueue.x-k8s.io" {
				t.Errorf("lease = %+v", c.LeaderElection)
			}
			sel := c.ManagedJobsNamespaceSelector.MatchExpressions[0]
			if sel.Values[0] != "kube-system" || sel.Values[1] != v1beta2.DefaultNamespace {
				t.Errorf("managed namespaces must exclude kube-system and the manager's: %+v", sel)
			}
			if c.FairSharing != nil {
				t.Errorf("fair sharing is off unless present: %+v", c.FairSharing)
			}
			if w := c.WaitForPodsReady; w == nil || w.Timeout.Duration != 30*time.Minute || *w.BlockAdmission || *w.RequeuingStrategy.BackoffBaseSeconds != 60 {
				t.Errorf("waitForPodsReady is on by default with a 30m timeout, not blocking: %+v", w)
			}
			if *c.MultiKueue.Origin != "multikueue" || *c.VisibilityServer.BindPort != 8082 {
				t.Errorf("multiKueue/visibility defaults: %+v %+v", c.MultiKueue, c.VisibilityServer)
			}
			if got := f.NotActedOn(kinds.Frameworks()); len(got) != 0 {
				t.Errorf("an empty file reports nothing not acted on, got %q", got)
			}
		}},
		{name: "presence of fairSharing turns it on", doc: header + "fairSharing: {preemptionStrategies: [LessThanInitialShare]}\n", check: func(t *testing.T, f *File) {
			if f.Config.FairSharing == nil || !slices.Equal(f.Config.FairSharing.PreemptionStrategies, []v1beta2.PreemptionStrategy{v1beta2.LessThanInitialShare}) {
				t.Errorf("fairSharing = %+v", f.Config.FairSharing)
			}
		}},
		{name: "the DisableWaitForPodsReady gate", doc: header + "featureGates: {DisableWaitForPodsReady: true}\n", check: func(t *testing.T, f *File) {
			if f.Config.WaitForPodsReady != nil || len(f.NotActedOn(kinds.Frameworks())) != 0 {
				t.Errorf("waitForPodsReady = %+v, not acted on %q", f.Config.WaitForPodsReady, f.NotActedOn(kinds.Frameworks()))
			}
		}},
		{name: "a Kueue configuration", doc: header + `namespace: kueue-system
manageJobsWithoutQueueName: true
managedJobsNamespaceSelector:
  matchLabels: {team: ml}
integrations:
  frameworks: ["batch/job", "pod"]
  labelKeysToCopy: [team, example.com/cost-center]
clientConnection: {qps: 50, burst: 100}
waitForPodsReady:
  timeout: 5m
  requeuingStrategy: {timestamp: Eviction, backoffLimitCount: 5}
internalCertManagement:
  enable: false
webhook: {port: 9443}
leaderElection: {leaderElect: true, resourceName: c1f6bfd2.kueue.x-k8s.io}
metrics: {bindAddress: ":8443", enableClusterQueueResources: true}
health: {healthProbeBindAddress: ":8081"}
pprofBindAddress: ":8083"
controller: {groupKindConcurrency: {Job.batch: 5, Workload.kueue.x-k8s.io: 10}, cacheSyncTimeout: 120000000000}
fairSharing: {preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]}
resources:
  excludeResourcePrefixes: [example.com/]
  transformations:
  - {input: nvidia.com/mig-1g.5gb, strategy: Replace, outputs: {example.com/gpu-memory: 5Gi}}
objectRetentionPolicies: {workloads: {afterFinished: 1h, afterDeactivatedByKueue: 0s}}
`, check: func(t *testing.T, f *File) {
			c := f.Config
			if *c.Namespace != "kueue-system" || !c.ManageJobsWithoutQueueName || *c.ClientConnection.QPS != 50 || c.PprofBindAddress != ":8083" {
				t.Errorf("values not read: %+v", c)
			}
			if c.WaitForPodsReady.Timeout.Duration != 5*time.Minute || *c.WaitForPodsReady.RecoveryTimeout != c.WaitForPodsReady.Timeout {
				t.Errorf("waitForPodsReady = %+v", c.WaitForPodsReady)
			}
			if c.LeaderElection.ResourceNamespace != "kueue-system" {
				t.Errorf("lease namespace follows namespace: %q", c.LeaderElection.ResourceNamespace)
			}
			if c.Controller.GroupKindConcurrency["Workload.kueue.x-k8s.io"] != 10 || *c.Controller.CacheSyncTimeout != 2*time.Minute {
				t.Errorf("controller = %+v", c.Controller)
			}
			if *c.Resources.Transformations[0].Strategy != v1beta2.Replace || c.ObjectRetentionPolicies.Workloads.AfterFinished.Duration != time.Hour {
				t.Errorf("resources/retention = %+v %+v", c.Resources, c.ObjectRetentionPolicies)
			}
			var wantReported []string
			if got := f.NotActedOn(kinds.Frameworks()); !reportedExactly(got, wantReported) {
				t.Errorf("not acted on = %q, want %q", got, wantReported)
			}
		}},
		{name: "v1beta1: enable flags", doc: headerV1beta1 + `fairSharing: {enable: true}
waitForPodsReady: {enable: true}
integrations: {frameworks: [pod], podOptions: {namespaceSelector: {matchLabels: {a: b}}}}
queueVisibility: {updateIntervalSeconds: 5}
`, check: func(t *testing.T, f *File) {
			c := f.Config
			if c.FairSharing == nil || len(c.FairSharing.PreemptionStrategies) != 2 {
				t.Errorf("fair sharing enabled without strategies gets both: %+v", c.FairSharing)
			}
			if w := c.WaitForPodsReady; w == nil || w.Timeout.Duration != 5*time.Minute || !*w.BlockAdmission {
				t.Errorf("v1beta1 waitForPodsReady: 5m timeout, blocking by default: %+v", w)
			}
			if c.APIVersion != "config.kueue.x-k8s.io/v1beta2" {
				t.Errorf("converted apiVersion = %q", c.APIVersion)
			}
			wantReported := []string{"integrations.podOptions", "queueVisibility"}
			if got := f.NotActedOn(kinds.Frameworks()); !reportedExactly(got, wantReported) {
				t.Errorf("not acted on = %q, want %q", got, wantReported)
			}
		}},
		{name: "v1beta1: off unless enabled", doc: headerV1beta1 + "fairSharing: {enable: false, preemptionStrategies: [LessThanInitialShare]}\nwaitForPodsReady: {timeout: 1m}\n",
			check: func(t *testing.T, f *File) {
				if f.Config.FairSharing != nil || f.Config.WaitForPodsReady != nil {
					t.Errorf("fairSharing %+v, waitForPodsReady %+v: both off in v1beta1 without enable", f.Config.FairSharing, f.Config.WaitForPodsReady)
				}
			}},
		{name: "v1beta1 fields are not v1beta2's", doc: header + "fairSharing: {enable: true}\n", wantErr: []string{`unknown field "fairSharing.enable"`}},
		{name: "unknown field", doc: header + "manageJobs: true\n", wantErr: []string{`unknown field "manageJobs"`}},
		{name: "nested unknown field", doc: header + "clientConnection: {qps: 5, burts: 10}\n", wantErr: []string{`unknown field "clientConnection.burts"`}},
		{name: "wrong apiVersion", doc: "apiVersion: config.kueue.x-k8s.io/v1alpha1\nkind: Configuration\n", wantErr: []string{"apiVersion", "v1alpha1"}},
		{name: "wrong kind", doc: "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Config\n", wantErr: []string{"kind", `"Config"`}},
		{name: "qps zero", doc: header + "clientConnection: {qps: 0}\n", wantErr: []string{"clientConnection.qps"}},
		{name: "unknown framework", doc: header + "integrations: {frameworks: [batch/job, acme/job]}\n", wantErr: []string{"integrations.frameworks[1]", "acme/job"}},
		{name: "duplicate framework", doc: header + "integrations: {frameworks: [pod, pod]}\n", wantErr: []string{"integrations.frameworks[1]", "Duplicate"}},
		{name: "bad namespace", doc: header + "namespace: Sluice\n", wantErr: []string{"namespace", "RFC 1123"}},
		{name: "bad selector", doc: header + "managedJobsNamespaceSelector: {matchExpressions: [{key: a, operator: Near}]}\n", wantErr: []string{"managedJobsNamespaceSelector.matchExpressions[0].operator"}},
		{name: "negative timeout", doc: header + "waitForPodsReady: {timeout: -1s}\n", wantErr: []string{"waitForPodsReady.timeout"}},
		{name: "requeuing timestamp", doc: header + "waitForPodsReady: {timeout: 1m, requeuingStrategy: {timestamp: Later}}\n", wantErr: []string{"waitForPodsReady.requeuingStrategy.timestamp"}},
		{name: "webhook port", doc: header + "webhook: {port: 70000}\n", wantErr: []string{"webhook.port"}},
		{name: "service name", doc: header + "internalCertManagement: {webhookServiceName: Web_Hook}\n", wantErr: []string{"internalCertManagement.webhookServiceName"}},
		{name: "renew deadline", doc: header + "leaderElection: {leaseDuration: 10s, renewDeadline: 15s}\n", wantErr: []string{"leaderElection.renewDeadline", "shorter than leaseDuration"}},
		{name: "fair sharing strategy", doc: header + "fairSharing: {preemptionStrategies: [Whatever]}\n", wantErr: []string{"fairSharing.preemptionStrategies[0]"}},
		{name: "label key to copy", doc: header + "integrations: {labelKeysToCopy: [\"bad key\"]}\n", wantErr: []string{"integrations.labelKeysToCopy[0]"}},
		{name: "quota check strategy", doc: header + "resources: {quotaCheckStrategy: Maybe}\n", wantErr: []string{"resources.quotaCheckStrategy"}},
		{name: "ignore undeclared with prefixes", doc: header + "resources: {quotaCheckStrategy: IgnoreUndeclared, excludeResourcePrefixes: [a/]}\n", wantErr: []string{"resources.quotaCheckStrategy", "excludeResourcePrefixes"}},
		{name: "empty excluded prefix", doc: header + "resources: {excludeResourcePrefixes: [\"\"]}\n", wantErr: []string{"resources.excludeResourcePrefixes[0]", "every resource"}},
		{name: "transformation without input", doc: header + "resources: {transformations: [{outputs: {cpu: 1}}]}\n", wantErr: []string{"resources.transformations[0].input"}},
		{name: "transformation twice", doc: header + "resources: {transformations: [{input: a/b}, {input: a/b}]}\n", wantErr: []string{"resources.transformations[1].input", "Duplicate"}},
		{name: "transformation strategy", doc: header + "resources: {transformations: [{input: a/b, strategy: Keep}]}\n", wantErr: []string{"resources.transformations[0].strategy"}},
		{name: "negative output", doc: header + "resources: {transformations: [{input: a/b, outputs: {cpu: -1}}]}\n", wantErr: []string{"resources.transformations[0].outputs[cpu]"}},
		{name: "negative retention", doc: header + "objectRetentionPolicies: {workloads: {afterFinished: -1s}}\n", wantErr: []string{"objectRetentionPolicies.workloads.afterFinished"}},
		{name: "unknown gate", doc: header + "featureGates: {GoFaster: true}\n", wantErr: []string{"featureGates[GoFaster]", "not a Kueue feature gate"}},
		{name: "concurrency", doc: header + "controller: {groupKindConcurrency: {Job.batch: 0}}\n", wantErr: []string{"controller.groupKindConcurrency[Job.batch]"}},
		{name: "dispatcher", doc: header + "multiKueue: {dispatcherName: mine}\n", wantErr: []string{"multiKueue.dispatcherName"}},
		{name: "incremental step", doc: header + "multiKueue: {dispatcherName: kueue.x-k8s.io/multikueue-dispatcher-incremental, incrementalDispatcherConfig: {stepSize: 0}}\n",
			wantErr: []string{"multiKueue.incrementalDispatcherConfig.stepSize", "must be positive"}},
		{name: "dynamic resources are refused", doc: header + "resources: {deviceClassMappings: [{name: example.com/gpu, deviceClassNames: [gpu.example.com]}]}\n",
			wantErr: []string{"resources.deviceClassMappings", "outside quota"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Decode([]byte(tc.doc), "")
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("accepted, want an error naming %v", tc.wantErr)
				}
				for _, want := range tc.wantErr {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not contain %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, f)
		})
	}
}

func TestDecodeDefaultsTheNamespaceToThePods(t *testing.T) {
	f, err := Decode([]byte(header), "kueue-system")
	if err != nil {
		t.Fatal(err)
	}
	if *f.Config.Namespace != "kueue-system" || f.Config.LeaderElection.ResourceNamespace != "kueue-system" ||
		f.Config.ManagedJobsNamespaceSelector.MatchExpressions[0].Values[1] != "kueue-system" {
		t.Errorf("namespace defaults: %+v", f.Config)
	}
}

func TestDefaultIsValid(t *testing.T) {
	if errs := v1beta2.Validate(Default().Config); len(errs) > 0 {
		t.Fatal(errs)
	}
}

// Kueue's own default configuration (kustomize install) and the one its
// Helm chart installs start sluice and mean the same: the frameworks sluice
// does not implement are reported (the manager refuses them if the cluster
// serves their kinds), nothing is silently dropped.
func TestKueueDefaultConfigurations(t *testing.T) {
	kustomize, err := os.ReadFile(filepath.Join("testdata", "kueue-v0.19.2", "controller_manager_config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	values, err := os.ReadFile(filepath.Join("testdata", "kueue-v0.19.2", "helm-values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var chart struct {
		ManagerConfig struct {
			ControllerManagerConfigYaml string `json:"controllerManagerConfigYaml"`
		} `json:"managerConfig"`
	}
	if err := yaml.Unmarshal(values, &chart); err != nil {
		t.Fatal(err)
	}
	for name, doc := range map[string][]byte{"kustomize": kustomize, "helm": []byte(chart.ManagerConfig.ControllerManagerConfigYaml)} {
		t.Run(name, func(t *testing.T) {
			f, err := Decode(doc, "kueue-system")
			if err != nil {
				t.Fatal(err)
			}
			c := f.Config
			if *c.ClientConnection.QPS != 300 || *c.ClientConnection.Burst != 500 || c.Metrics.BindAddress != ":8443" ||
				*c.Webhook.Port != 9443 || c.Health.HealthProbeBindAddress != ":8081" || c.LeaderElection.ResourceName != "c1f6bfd2.kueue.x-k8s.io" {
				t.Errorf("servers and client: %+v", c.ControllerManager)
			}
			if c.Controller.GroupKindConcurrency["Workload.kueue.x-k8s.io"] != 10 || c.Controller.GroupKindConcurrency["Job.batch"] != 5 {
				t.Errorf("concurrency = %v", c.Controller.GroupKindConcurrency)
			}
			if c.FairSharing != nil || c.ManageJobsWithoutQueueName || *c.Namespace != "kueue-system" {
				t.Errorf("fair sharing %+v, manageJobsWithoutQueueName %v", c.FairSharing, c.ManageJobsWithoutQueueName)
			}
			for _, fw := range []string{"batch/job", "pod", "deployment", "statefulset", "ray.io/rayjob", "jobset.x-k8s.io/jobset"} {
				if !slices.Contains(c.Integrations.Frameworks, fw) {
					t.Errorf("framework %s missing from %v", fw, c.Integrations.Frameworks)
				}
			}
			reported := strings.Join(f.NotActedOn(kinds.Frameworks()), "\n")
			if strings.Contains(reported, "is not implemented yet") {
				t.Errorf("not acted on:\n%s\nnames a framework as not implemented: sluice implements every one Kueue's default file enables", reported)
			}
			// Kinds sluice implements, which Kueue's default file enables.
			for _, implemented := range []string{"jobset.x-k8s.io/jobset", "ray.io/rayjob", "ray.io/raycluster", "ray.io/rayservice",
				"kubeflow.org/mpijob", "trainer.kubeflow.org/trainjob", "workload.codeflare.dev/appwrapper", "leaderworkerset.x-k8s.io/leaderworkerset"} {
				if strings.Contains(reported, implemented+" ") {
					t.Errorf("not acted on:\n%s\nnames %s, which sluice implements", reported, implemented)
				}
			}
		})
	}
}

// reportedExactly: each wanted prefix starts one reported line, and no
// line is left over.
func reportedExactly(got, wantPrefixes []string) bool {
	if len(got) != len(wantPrefixes) {
		return false
	}
	for _, want := range wantPrefixes {
		if !slices.ContainsFunc(got, func(line string) bool { return strings.HasPrefix(line, want) }) {
			return false
		}
	}
	return true
}
