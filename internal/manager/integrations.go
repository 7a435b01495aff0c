package manager

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
	"github.com/sluicehq/sluice/internal/integration/deployment"
	"github.com/sluicehq/sluice/internal/integration/job"
	"github.com/sluicehq/sluice/internal/integration/pod"
	"github.com/sluicehq/sluice/internal/integration/statefulset"
)

// implementedKinds are the job kinds sluice drives; other frameworks of
// the configuration are accepted and not driven yet.
var implementedKinds = []integration.Kind{job.Kind, pod.Kind}

// integrations is the job framework as the configuration enables it.
type integrations struct {
	kinds  []integration.Kind
	policy *integration.Policy
	// enabled by framework name, for the webhooks that are always served.
	enabled map[string]bool
	// labelKeysToCopy: job labels copied to Workloads.
	labelKeysToCopy []string
	// multiKueue: Jobs sent to a MultiKueue ClusterQueue are dispatched.
	multiKueue bool
	// notices delivers the pod webhook's notices as Events (pod enabled).
	notices *pod.Notices
}

func newIntegrations(cfg *configapi.Configuration, ownerReader client.Reader) (*integrations, error) {
	in := &integrations{enabled: map[string]bool{}, labelKeysToCopy: cfg.Integrations.LabelKeysToCopy, multiKueue: multiKueueEnabled(cfg)}
	// Deployments and StatefulSets are queued through their Pods: no kind
	// of their own.
	for _, fw := range []string{configapi.FrameworkDeployment, configapi.FrameworkStatefulSet} {
		in.enabled[fw] = slices.Contains(cfg.Integrations.Frameworks, fw)
	}
	for _, k := range implementedKinds {
		if slices.Contains(cfg.Integrations.Frameworks, k.Framework) {
			in.kinds = append(in.kinds, k)
			in.enabled[k.Framework] = true
		}
	}
	policy, err := integration.NewPolicy(cfg.ManageJobsWithoutQueueName, cfg.ManagedJobsNamespaceSelector, in.kinds, ownerReader)
	if err != nil {
		return nil, err
	}
	in.policy = policy
	return in, nil
}

// stopsFirst: the Workloads of enabled kinds keep their reservation until
// their job stopped.
func (in *integrations) stopsFirst(wl *kueue.Workload) bool {
	return integration.OwnedByKind(wl, in.policy.ParentKinds) || (in.enabled[configapi.FrameworkPod] && pod.IsGroupWorkload(wl))
}

func (in *integrations) setupReconcilers(ctx context.Context, mgr ctrl.Manager, writer client.Client) error {
	if err := integration.SetupIndexes(ctx, mgr.GetFieldIndexer(), in.kinds); err != nil {
		return err
	}
	for _, k := range in.kinds {
		r := &integration.Reconciler{
			Client:    writer,
			APIReader: mgr.GetAPIReader(),
			Kind:      k,
			Policy:    in.policy,
			Recorder:  mgr.GetEventRecorder("sluice-" + strings.ToLower(k.GVK.Kind) + "-controller"),
			Clock:     clock.RealClock{},

			LabelKeysToCopy: in.labelKeysToCopy,
		}
		if err := r.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("setting up the %s integration: %w", k.Framework, err)
		}
	}
	if in.enabled[configapi.FrameworkPod] {
		in.notices = pod.NewNotices(mgr.GetAPIReader(), mgr.GetEventRecorder("sluice-pod-controller"))
		if err := in.notices.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("setting up pod notices: %w", err)
		}
		if err := (&pod.GroupReconciler{Client: writer, Clock: clock.RealClock{}, LabelKeysToCopy: in.labelKeysToCopy}).SetupWithManager(mgr); err != nil {
			return fmt.Errorf("setting up pod groups: %w", err)
		}
	}
	return nil
}

// setupWebhooks serves every kind's webhooks, enabled or not: the webhook
// configuration is static, so a disabled kind's webhook must answer and let
// everything through.
func (in *integrations) setupWebhooks(mgr ctrl.Manager) error {
	err := job.SetupWebhook(mgr, &job.Webhook{
		Enabled:     in.enabled[configapi.FrameworkBatchJob],
		Policy:      in.policy,
		Reader:      mgr.GetClient(),
		ClassReader: mgr.GetAPIReader(),
		MultiKueue:  in.multiKueue,
	})
	if err != nil {
		return err
	}
	err = pod.SetupWebhook(mgr, &pod.Webhook{
		Enabled:     in.enabled[configapi.FrameworkPod],
		Policy:      in.policy,
		Reader:      mgr.GetClient(),
		OwnerReader: mgr.GetAPIReader(),
		Notices:     in.notices,
	})
	if err != nil {
		return err
	}
	if err := deployment.SetupWebhook(mgr, &deployment.Webhook{Enabled: in.enabled[configapi.FrameworkDeployment]}); err != nil {
		return err
	}
	return statefulset.SetupWebhook(mgr, &statefulset.Webhook{Enabled: in.enabled[configapi.FrameworkStatefulSet]})
}
