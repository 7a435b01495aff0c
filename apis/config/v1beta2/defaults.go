package v1beta2

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Defaults of the configuration.
const (
	DefaultNamespace              = "sluice-system"
	DefaultWebhookServiceName     = "sluice-webhook-service"
	DefaultWebhookSecretName      = "sluice-webhook-server-cert"
	DefaultWebhookPort            = 9443
	DefaultWebhookCertDir         = "/tmp/k8s-webhook-server/serving-certs"
	DefaultMetricsBindAddress     = ":8080"
	DefaultHealthProbeBindAddress = ":8081"
	DefaultLeaderElectionID       = "c1f6bfd2.kueue.x-k8s.io"
	FrameworkBatchJob             = "batch/job"
	FrameworkPod                  = "pod"
	FrameworkDeployment           = "deployment"
	FrameworkStatefulSet          = "statefulset"
)

// DefaultFrameworks are enabled when the file names none.
var DefaultFrameworks = []string{FrameworkBatchJob}

// SetDefaults fills every unset field. Client QPS and Burst stay unset: the
// manager's client is not throttled unless asked to be.
func SetDefaults(c *Configuration) {
	if c.Namespace == nil {
		c.Namespace = ptr.To(DefaultNamespace)
	}
	if c.ManagedJobsNamespaceSelector == nil {
		c.ManagedJobsNamespaceSelector = &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{
				Key:      "kubernetes.io/metadata.name",
				Operator: metav1.LabelSelectorOpNotIn,
				Values:   []string{"kube-system", *c.Namespace},
			}},
		}
	}
	if c.Integrations == nil {
		c.Integrations = &Integrations{}
	}
	if len(c.Integrations.Frameworks) == 0 {
		c.Integrations.Frameworks = append([]string(nil), DefaultFrameworks...)
	}
	if c.ClientConnection == nil {
		c.ClientConnection = &ClientConnection{}
	}
	if c.InternalCertManagement == nil {
		c.InternalCertManagement = &InternalCertManagement{}
	}
	icm := c.InternalCertManagement
	if icm.Enable == nil {
		icm.Enable = ptr.To(true)
	}
	if icm.WebhookServiceName == nil {
		icm.WebhookServiceName = ptr.To(DefaultWebhookServiceName)
	}
	if icm.WebhookSecretName == nil {
		icm.WebhookSecretName = ptr.To(DefaultWebhookSecretName)
	}
	if c.Webhook == nil {
		c.Webhook = &WebhookServer{}
	}
	if c.Webhook.Port == nil {
		c.Webhook.Port = ptr.To(DefaultWebhookPort)
	}
	if c.Webhook.CertDir == "" {
		c.Webhook.CertDir = DefaultWebhookCertDir
	}
	if c.LeaderElection == nil {
		c.LeaderElection = &LeaderElection{}
	}
	le := c.LeaderElection
	if le.LeaderElect == nil {
		le.LeaderElect = ptr.To(true)
	}
	if le.ResourceName == "" {
		le.ResourceName = DefaultLeaderElectionID
	}
	if le.ResourceNamespace == "" {
		le.ResourceNamespace = *c.Namespace
	}
	if le.LeaseDuration == nil {
		le.LeaseDuration = &metav1.Duration{Duration: 15 * time.Second}
	}
	if le.RenewDeadline == nil {
		le.RenewDeadline = &metav1.Duration{Duration: 10 * time.Second}
	}
	if le.RetryPeriod == nil {
		le.RetryPeriod = &metav1.Duration{Duration: 2 * time.Second}
	}
	if c.Metrics == nil {
		c.Metrics = &Metrics{}
	}
	if c.Metrics.BindAddress == "" {
		c.Metrics.BindAddress = DefaultMetricsBindAddress
	}
	if c.Health == nil {
		c.Health = &Health{}
	}
	if c.Health.HealthProbeBindAddress == "" {
		c.Health.HealthProbeBindAddress = DefaultHealthProbeBindAddress
	}
	if c.WaitForPodsReady != nil && c.WaitForPodsReady.Enable && c.WaitForPodsReady.Timeout == nil {
		c.WaitForPodsReady.Timeout = &metav1.Duration{Duration: 5 * time.Minute}
	}
}
