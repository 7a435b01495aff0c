package manager

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
	"github.com/sluicehq/sluice/internal/integration/kinds"
	"github.com/sluicehq/sluice/internal/integration/pod"
)

// integrations is the job framework as the configuration enables it, read
// from the list of kinds.
type integrations struct {
	registrations []integration.Registration
	// kinds are the enabled queued kinds.
	kinds  []integration.Kind
	policy *integration.Policy
	// enabled by framework name, for the webhooks that are always served.
	enabled map[string]bool
	// parentsPodsOnly: the pod integration is enabled only because a kind
	// queued through its Pods is (Kueue's implicitly enabled "pod").
	parentsPodsOnly bool
	// awaited are enabled kinds whose CustomResourceDefinition the cluster
	// does not serve yet: no controller watches them until a restart (the
	// framework guard stops the manager when one appears).
	awaited map[string]bool
	// labelKeysToCopy: job labels copied to Workloads.
	labelKeysToCopy []string
	// multiKueue: Jobs sent to a MultiKueue ClusterQueue are dispatched.
	multiKueue bool
	// setups are each kind's setup, by framework name.
	setups map[string]integration.Setup
	// external are the kinds of integrations.externalFrameworks: their
	// controllers queue them (they own their Workloads), and sluice treats
	// them as parents of what they own.
	external map[schema.GroupKind]schema.GroupVersionKind
	// self is the user the manager acts as (integration.Deps.Self).
	self string
}

func newIntegrations(cfg *configapi.Configuration, ownerReader client.Reader, awaited map[string]bool) (*integrations, error) {
	in := &integrations{registrations: kinds.All(), enabled: map[string]bool{}, awaited: awaited, setups: map[string]integration.Setup{},
		labelKeysToCopy: cfg.Integrations.LabelKeysToCopy, multiKueue: multiKueueEnabled(cfg)}
	for _, r := range in.registrations {
		if slices.Contains(cfg.Integrations.Frameworks, r.Framework) {
			in.enabled[r.Framework] = true
		}
	}
	for _, r := range in.registrations {
		if r.ThroughPods && in.enabled[r.Framework] && !in.enabled[configapi.FrameworkPod] {
			in.enabled[configapi.FrameworkPod], in.parentsPodsOnly = true, true
		}
	}
	for _, r := range in.registrations {
		if !in.enabled[r.Framework] {
			continue
		}
		if r.Queued != nil {
			in.kinds = append(in.kinds, *r.Queued)
		}
	}
	policy, err := integration.NewPolicy(cfg.ManageJobsWithoutQueueName, cfg.ManagedJobsNamespaceSelector, in.kinds, ownerReader)
	if err != nil {
		return nil, err
	}
	var known []integration.Kind
	for _, r := range in.registrations {
		if r.Queued != nil {
			known = append(known, *r.Queued)
		}
	}
	policy.AddKnownKinds(known)
	in.external = integration.ExternalKinds(cfg.Integrations.ExternalFrameworks)
	for gk := range in.external {
		policy.AddExternalParent(gk)
	}
	in.policy = policy
	return in, nil
}

// knownOwners are the registered kinds and the external frameworks, as the
// owner walk reads them.
func (in *integrations) knownOwners() map[schema.GroupKind]func() client.Object {
	owners := kinds.KnownOwners()
	for gk, gvk := range in.external {
		owners[gk] = func() client.Object {
			owner := &metav1.PartialObjectMetadata{}
			owner.SetGroupVersionKind(gvk)
			return owner
		}
	}
	return owners
}

// stopsFirst: the Workloads of enabled kinds keep their reservation until
// their job stopped.
func (in *integrations) stopsFirst(wl *kueue.Workload) bool {
	return integration.OwnedByKind(wl, in.policy.ParentKinds) || (in.enabled[configapi.FrameworkPod] && pod.IsGroupWorkload(wl))
}

// served are the enabled queued kinds the cluster serves now.
func (in *integrations) served() []integration.Kind {
	var out []integration.Kind
	for _, k := range in.kinds {
		if !in.awaited[k.Framework] {
			out = append(out, k)
		}
	}
	return out
}

// setupReconcilers builds every kind's setup, and runs the generic
// Reconciler and the kind's own controllers for the enabled ones.
func (in *integrations) setupReconcilers(ctx context.Context, mgr ctrl.Manager, writer client.Client, workloads integration.WorkloadStatusWriter) error {
	var groupers []func(*corev1.Pod)
	var sizers []integration.GroupSizer
	for _, r := range in.registrations {
		if r.GroupPods != nil && in.enabled[r.Framework] {
			groupers = append(groupers, r.GroupPods)
		}
		if r.GroupSize != nil {
			sizers = append(sizers, r.GroupSize)
		}
	}
	for _, r := range in.registrations {
		in.setups[r.Framework] = r.New(integration.Deps{
			Enabled: in.enabled[r.Framework], Policy: in.policy,
			Client: writer, Workloads: workloads, Reader: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Clock: clock.RealClock{},
			LabelKeysToCopy: in.labelKeysToCopy, MultiKueue: in.multiKueue, KnownOwners: in.knownOwners(), PodGroupers: groupers,
			PodGroupSizers: sizers, ParentsPodsOnly: in.parentsPodsOnly, Self: in.self,
		})
	}
	served := in.served()
	if err := integration.SetupIndexes(ctx, mgr.GetFieldIndexer(), served); err != nil {
		return err
	}
	for _, k := range served {
		r := &integration.Reconciler{
			Client:    writer,
			Workloads: workloads,
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
	for _, r := range in.registrations {
		if cs, ok := in.setups[r.Framework].(integration.ControllerSetup); ok && in.enabled[r.Framework] && !in.awaited[r.Framework] {
			if err := cs.SetupControllers(ctx, mgr); err != nil {
				return fmt.Errorf("setting up the %s integration: %w", r.Framework, err)
			}
		}
	}
	return nil
}

// setupWebhooks serves every kind's webhooks, enabled or not: the webhook
// configuration is static, so a disabled kind's webhook must answer and let
// everything through.
func (in *integrations) setupWebhooks(mgr ctrl.Manager) error {
	for _, r := range in.registrations {
		if err := in.setups[r.Framework].SetupWebhook(mgr); err != nil {
			return fmt.Errorf("setting up the %s webhooks: %w", r.Framework, err)
		}
	}
	return nil
}
