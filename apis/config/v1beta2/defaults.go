package v1beta2

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Defaults of the configuration: Kueue's, but for sluice's own names
// (namespace, webhook Service and Secret).
const (
	DefaultNamespace                       = "sluice-system"
	DefaultWebhookServiceName              = "sluice-webhook-service"
	DefaultWebhookSecretName               = "sluice-webhook-server-cert"
	DefaultWebhookPort                     = 9443
	DefaultWebhookCertDir                  = "/tmp/k8s-webhook-server/serving-certs"
	DefaultMetricsBindAddress              = ":8443"
	DefaultHealthProbeBindAddress          = ":8081"
	DefaultLeaderElectionID                = "c1f6bfd2.kueue.x-k8s.io"
	DefaultClientConnectionQPS             = float32(300)
	DefaultClientConnectionBurst           = int32(500)
	DefaultWaitForPodsReadyTimeout         = 30 * time.Minute
	DefaultRequeuingBackoffBase            = int32(60)
	DefaultRequeuingBackoffMax             = int32(3600)
	DefaultMultiKueueGCInterval            = time.Minute
	DefaultMultiKueueOrigin                = "multikueue"
	DefaultMultiKueueWorkerLost            = 15 * time.Minute
	DefaultVisibilityBindPort              = int32(8082)
	DefaultIncrementalStepSize             = int32(3)
	DefaultUsageSamplingInterval           = 5 * time.Minute
	DisableWaitForPodsReadyGate            = "DisableWaitForPodsReady"
	MultiKueueGate                         = "MultiKueue"
	MultiKueueAllowInsecureKubeconfigsGate = "MultiKueueAllowInsecureKubeconfigs"
	// VisibilityOnDemandGate off stops the visibility server (on by
	// default, as in Kueue).
	VisibilityOnDemandGate          = "VisibilityOnDemand"
	FrameworkBatchJob               = "batch/job"
	FrameworkPod                    = "pod"
	FrameworkDeployment             = "deployment"
	FrameworkStatefulSet            = "statefulset"
	FrameworkJobSet                 = "jobset.x-k8s.io/jobset"
	FrameworkRayJob                 = "ray.io/rayjob"
	FrameworkRayCluster             = "ray.io/raycluster"
	FrameworkRayService             = "ray.io/rayservice"
	FrameworkLeaderWorkerSet        = "leaderworkerset.x-k8s.io/leaderworkerset"
	FrameworkMPIJob                 = "kubeflow.org/mpijob"
	FrameworkTrainJob               = "trainer.kubeflow.org/trainjob"
	FrameworkAppWrapper             = "workload.codeflare.dev/appwrapper"
	defaultTransformationStrategy   = Retain
	defaultMultiKueueDispatcherName = MultiKueueDispatcherModeAllAtOnce
)

// DefaultFrameworks are enabled when the file names none.
var DefaultFrameworks = []string{FrameworkBatchJob}

// SetDefaults fills every unset field as Kueue does.
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
	c.ClientConnection.QPS = defaultPtr(c.ClientConnection.QPS, DefaultClientConnectionQPS)
	c.ClientConnection.Burst = defaultPtr(c.ClientConnection.Burst, DefaultClientConnectionBurst)
	setCertDefaults(c)
	setServerDefaults(c)
	setLeaderElectionDefaults(c)
	setWaitForPodsReadyDefaults(c)
	setMultiKueueDefaults(c)
	if afs := c.AdmissionFairSharing; afs != nil && afs.UsageSamplingInterval.Duration == 0 {
		afs.UsageSamplingInterval.Duration = DefaultUsageSamplingInterval
	}
	if c.VisibilityServer == nil {
		c.VisibilityServer = &VisibilityServerConfiguration{}
	}
	c.VisibilityServer.BindPort = defaultPtr(c.VisibilityServer.BindPort, DefaultVisibilityBindPort)
	if c.Resources != nil {
		for i := range c.Resources.Transformations {
			c.Resources.Transformations[i].Strategy = defaultPtr(c.Resources.Transformations[i].Strategy, defaultTransformationStrategy)
		}
	}
}

func setCertDefaults(c *Configuration) {
	if c.InternalCertManagement == nil {
		c.InternalCertManagement = &InternalCertManagement{}
	}
	icm := c.InternalCertManagement
	icm.Enable = defaultPtr(icm.Enable, true)
	if *icm.Enable {
		icm.WebhookServiceName = defaultPtr(icm.WebhookServiceName, DefaultWebhookServiceName)
		icm.WebhookSecretName = defaultPtr(icm.WebhookSecretName, DefaultWebhookSecretName)
	}
}

func setServerDefaults(c *Configuration) {
	c.Webhook.Port = defaultPtr(c.Webhook.Port, DefaultWebhookPort)
	if c.Webhook.CertDir == "" {
		c.Webhook.CertDir = DefaultWebhookCertDir
	}
	if c.Metrics.BindAddress == "" {
		c.Metrics.BindAddress = DefaultMetricsBindAddress
	}
	if c.Metrics.LocalQueueMetrics == nil {
		c.Metrics.LocalQueueMetrics = &LocalQueueMetrics{Enable: true}
	}
	if c.Health.HealthProbeBindAddress == "" {
		c.Health.HealthProbeBindAddress = DefaultHealthProbeBindAddress
	}
}

func setLeaderElectionDefaults(c *Configuration) {
	if c.LeaderElection == nil {
		c.LeaderElection = &LeaderElection{}
	}
	le := c.LeaderElection
	le.LeaderElect = defaultPtr(le.LeaderElect, true)
	if le.ResourceName == "" {
		le.ResourceName = DefaultLeaderElectionID
	}
	if le.ResourceNamespace == "" {
		le.ResourceNamespace = *c.Namespace
	}
	if le.ResourceLock == "" {
		le.ResourceLock = "leases"
	}
	le.LeaseDuration = defaultPtr(le.LeaseDuration, metav1.Duration{Duration: 15 * time.Second})
	le.RenewDeadline = defaultPtr(le.RenewDeadline, metav1.Duration{Duration: 10 * time.Second})
	le.RetryPeriod = defaultPtr(le.RetryPeriod, metav1.Duration{Duration: 2 * time.Second})
}

// setWaitForPodsReadyDefaults turns it on with a 30 minute timeout unless
// the DisableWaitForPodsReady gate is set, as Kueue 0.19 does.
func setWaitForPodsReadyDefaults(c *Configuration) {
	if c.FeatureGates[DisableWaitForPodsReadyGate] {
		c.WaitForPodsReady = nil
		return
	}
	if c.WaitForPodsReady == nil {
		c.WaitForPodsReady = &WaitForPodsReady{}
	}
	w := c.WaitForPodsReady
	if w.Timeout.Duration == 0 {
		w.Timeout.Duration = DefaultWaitForPodsReadyTimeout
	}
	w.BlockAdmission = defaultPtr(w.BlockAdmission, false)
	w.RecoveryTimeout = defaultPtr(w.RecoveryTimeout, w.Timeout)
	if w.RequeuingStrategy == nil {
		w.RequeuingStrategy = &RequeuingStrategy{}
	}
	rs := w.RequeuingStrategy
	rs.Timestamp = defaultPtr(rs.Timestamp, EvictionTimestamp)
	rs.BackoffBaseSeconds = defaultPtr(rs.BackoffBaseSeconds, DefaultRequeuingBackoffBase)
	rs.BackoffMaxSeconds = defaultPtr(rs.BackoffMaxSeconds, DefaultRequeuingBackoffMax)
}

func setMultiKueueDefaults(c *Configuration) {
	if c.MultiKueue == nil {
		c.MultiKueue = &MultiKueue{}
	}
	mk := c.MultiKueue
	mk.GCInterval = defaultPtr(mk.GCInterval, metav1.Duration{Duration: DefaultMultiKueueGCInterval})
	if ptr.Deref(mk.Origin, "") == "" {
		mk.Origin = ptr.To(DefaultMultiKueueOrigin)
	}
	mk.WorkerLostTimeout = defaultPtr(mk.WorkerLostTimeout, metav1.Duration{Duration: DefaultMultiKueueWorkerLost})
	mk.DispatcherName = defaultPtr(mk.DispatcherName, defaultMultiKueueDispatcherName)
	if *mk.DispatcherName == MultiKueueDispatcherModeIncremental {
		if mk.IncrementalDispatcherConfig == nil {
			mk.IncrementalDispatcherConfig = &IncrementalDispatcherConfig{}
		}
		mk.IncrementalDispatcherConfig.StepSize = defaultPtr(mk.IncrementalDispatcherConfig.StepSize, DefaultIncrementalStepSize)
	}
}

// defaultPtr is p, or a pointer to v when p is nil.
func defaultPtr[T any](p *T, v T) *T {
	if p == nil {
		return &v
	}
	return p
}
