package pod

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/sluicehq/sluice/internal/integration"
)

// Registration is the plain Pod in the list of kinds.
var Registration = integration.Registration{
	Framework: Kind.Framework,
	GVK:       Kind.GVK,
	NewObject: Kind.NewObject,
	Queued:    &Kind,
	New:       func(deps integration.Deps) integration.Setup { return &setup{deps: deps} },
}

// setup holds what the pod integration's controllers and webhook share:
// the notices the webhook records and a controller delivers.
type setup struct {
	deps    integration.Deps
	notices *Notices
}

// SetupControllers starts the notices and the pod groups' reconciler (the
// generic one, for the group shape).
func (s *setup) SetupControllers(_ context.Context, mgr ctrl.Manager) error {
	s.notices = NewNotices(s.deps.APIReader, mgr.GetEventRecorder("sluice-pod-controller"))
	if err := s.notices.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up pod notices: %w", err)
	}
	groups := &integration.Reconciler{
		Client:          s.deps.Client,
		Workloads:       s.deps.Workloads,
		APIReader:       s.deps.APIReader,
		Kind:            groupKind(s.deps.PodGroupSizers),
		Recorder:        mgr.GetEventRecorder("sluice-pod-group-controller"),
		Clock:           s.deps.Clock,
		LabelKeysToCopy: s.deps.LabelKeysToCopy,
	}
	if err := groups.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up pod groups: %w", err)
	}
	return nil
}

// SetupWebhook serves the Pod webhooks.
func (s *setup) SetupWebhook(mgr ctrl.Manager) error {
	return SetupWebhook(mgr, &Webhook{
		Enabled:     s.deps.Enabled,
		Policy:      s.deps.Policy,
		Reader:      s.deps.Reader,
		OwnerReader: s.deps.APIReader,
		Notices:     s.notices,
		KnownOwners: s.deps.KnownOwners,
		Groupers:    s.deps.PodGroupers,
		ParentsOnly: s.deps.ParentsPodsOnly,
		Self:        s.deps.Self,
	})
}
