package v1beta2

import (
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	header := "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
	cases := []struct {
		name    string
		doc     string
		wantErr []string
		check   func(t *testing.T, c *Configuration)
	}{
		{name: "empty file gets defaults", doc: header, check: func(t *testing.T, c *Configuration) {
			if *c.Namespace != DefaultNamespace || !*c.InternalCertManagement.Enable || !*c.LeaderElection.LeaderElect {
				t.Errorf("defaults not applied: %+v", c)
			}
			if c.ClientConnection.QPS != nil || c.ClientConnection.Burst != nil {
				t.Errorf("the client must not be throttled by default: %+v", c.ClientConnection)
			}
			if len(c.Integrations.Frameworks) != 1 || c.Integrations.Frameworks[0] != FrameworkBatchJob {
				t.Errorf("frameworks = %v", c.Integrations.Frameworks)
			}
			if c.LeaderElection.ResourceNamespace != DefaultNamespace {
				t.Errorf("lease namespace = %q", c.LeaderElection.ResourceNamespace)
			}
			sel := c.ManagedJobsNamespaceSelector.MatchExpressions[0]
			if sel.Values[0] != "kube-system" || sel.Values[1] != DefaultNamespace {
				t.Errorf("managed namespaces must exclude kube-system and the manager's: %+v", sel)
			}
		}},
		{name: "a Kueue configuration", doc: header + `namespace: kueue-system
manageJobsWithoutQueueName: true
managedJobsNamespaceSelector:
  matchLabels: {team: ml}
integrations:
  frameworks: ["batch/job", "pod"]
clientConnection: {qps: 50, burst: 100}
waitForPodsReady:
  enable: true
  blockAdmission: false
  requeuingStrategy: {timestamp: Eviction, backoffLimitCount: 5}
internalCertManagement:
  enable: false
webhook: {port: 9443}
leaderElection: {leaderElect: true, resourceName: c1f6bfd2.kueue.x-k8s.io}
metrics: {bindAddress: ":8443", enableClusterQueueResources: true}
health: {healthProbeBindAddress: ":8081"}
fairSharing: {enable: true, preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]}
`, check: func(t *testing.T, c *Configuration) {
			if *c.Namespace != "kueue-system" || !c.ManageJobsWithoutQueueName || *c.ClientConnection.QPS != 50 {
				t.Errorf("values not read: %+v", c)
			}
			if c.WaitForPodsReady.Timeout == nil || c.WaitForPodsReady.Timeout.Minutes() != 5 {
				t.Errorf("waitForPodsReady.timeout default missing: %+v", c.WaitForPodsReady)
			}
			if c.LeaderElection.ResourceNamespace != "kueue-system" {
				t.Errorf("lease namespace follows namespace: %q", c.LeaderElection.ResourceNamespace)
			}
		}},
		{name: "unknown field", doc: header + "manageJobs: true\n", wantErr: []string{`unknown field "manageJobs"`}},
		{name: "nested unknown field", doc: header + "clientConnection: {qps: 5, burts: 10}\n", wantErr: []string{`unknown field "clientConnection.burts"`}},
		{name: "wrong apiVersion", doc: "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n", wantErr: []string{"apiVersion", "v1beta1"}},
		{name: "wrong kind", doc: "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Config\n", wantErr: []string{"kind", `"Config"`}},
		{name: "qps zero", doc: header + "clientConnection: {qps: 0}\n", wantErr: []string{"clientConnection.qps"}},
		{name: "burst without qps", doc: header + "clientConnection: {burst: 10}\n", wantErr: []string{"clientConnection.qps", "burst needs qps"}},
		{name: "unknown framework", doc: header + "integrations: {frameworks: [batch/job, acme/job]}\n", wantErr: []string{"integrations.frameworks[1]", "acme/job"}},
		{name: "a Kueue framework sluice doesn't implement", doc: header + "integrations: {frameworks: [batch/job, ray.io/rayjob]}\n",
			wantErr: []string{"integrations.frameworks[1]", "ray.io/rayjob", "would run outside quota", "batch/job, pod, deployment, statefulset"}},
		{name: "duplicate framework", doc: header + "integrations: {frameworks: [pod, pod]}\n", wantErr: []string{"integrations.frameworks[1]", "Duplicate"}},
		{name: "bad namespace", doc: header + "namespace: Sluice\n", wantErr: []string{"namespace", "RFC 1123"}},
		{name: "bad selector", doc: header + "managedJobsNamespaceSelector: {matchExpressions: [{key: a, operator: Near}]}\n", wantErr: []string{"managedJobsNamespaceSelector.matchExpressions[0].operator"}},
		{name: "negative timeout", doc: header + "waitForPodsReady: {enable: true, timeout: -1s}\n", wantErr: []string{"waitForPodsReady.timeout"}},
		{name: "webhook port", doc: header + "webhook: {port: 70000}\n", wantErr: []string{"webhook.port"}},
		{name: "service name", doc: header + "internalCertManagement: {webhookServiceName: Web_Hook}\n", wantErr: []string{"internalCertManagement.webhookServiceName"}},
		{name: "renew deadline", doc: header + "leaderElection: {leaseDuration: 10s, renewDeadline: 15s}\n", wantErr: []string{"leaderElection.renewDeadline", "shorter than leaseDuration"}},
		{name: "fair sharing strategy", doc: header + "fairSharing: {preemptionStrategies: [Whatever]}\n", wantErr: []string{"fairSharing.preemptionStrategies[0]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Decode([]byte(tc.doc))
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
			tc.check(t, cfg)
		})
	}
}
