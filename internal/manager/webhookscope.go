package manager

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	"github.com/sluicehq/sluice/config"
	"github.com/sluicehq/sluice/internal/integration/kinds"
)

// The integrations' webhooks fail closed: while the manager is down, what
// they intercept can't be created. The installed configuration lists every
// integration; the manager narrows it at startup to what its configuration
// queues, so that an outage blocks no more than that:
//   - the webhooks of disabled integrations are removed (added back, from
//     the generated manifests, when an integration is enabled again);
//   - the others see only the namespaces of managedJobsNamespaceSelector,
//     never kube-system nor the manager's own namespace.
// No object selector: an unlabelled Pod or Job is queued in a namespace
// with a LocalQueue "default", so the webhooks must see them all.

// webhookScope is how the integrations' webhooks should look.
type webhookScope struct {
	enabled    map[string]bool
	namespaces *metav1.LabelSelector
	// names of the installed configurations.
	names webhookConfigurationNames
}

// webhookConfigurationNames are the names the install gave the webhook
// configurations.
type webhookConfigurationNames struct{ validating, mutating string }

// WebhookConfigurationNames are the names of the validating and mutating
// webhook configurations the manager keeps (certificates, scoping) under
// cfg.
func WebhookConfigurationNames(cfg *configapi.Configuration) (validating, mutating string) {
	names := namesOfWebhookConfigurations(cfg)
	return names.validating, names.mutating
}

// namesOfWebhookConfigurations follows the install's prefix, read from the
// webhook Service's name: sluice-webhook-service (config/default) names
// them sluice-validating-webhook-configuration and so on,
// kueue-webhook-service (config/kueue-names) kueue-... A Service named
// otherwise, or none (certificates managed elsewhere), keeps sluice's.
func namesOfWebhookConfigurations(cfg *configapi.Configuration) webhookConfigurationNames {
	names := webhookConfigurationNames{validating: config.ValidatingWebhookConfigurationName, mutating: config.MutatingWebhookConfigurationName}
	if icm := cfg.InternalCertManagement; icm != nil && icm.WebhookServiceName != nil {
		if prefix, ok := strings.CutSuffix(*icm.WebhookServiceName, "webhook-service"); ok {
			names = webhookConfigurationNames{validating: prefix + "validating-webhook-configuration", mutating: prefix + "mutating-webhook-configuration"}
		}
	}
	return names
}

func newWebhookScope(cfg *configapi.Configuration, enabled map[string]bool) webhookScope {
	sel := &metav1.LabelSelector{}
	if cfg.ManagedJobsNamespaceSelector != nil {
		sel = cfg.ManagedJobsNamespaceSelector.DeepCopy()
	}
	never := metav1.LabelSelectorRequirement{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpNotIn,
		Values: []string{"kube-system", *cfg.Namespace}}
	if !slices.ContainsFunc(sel.MatchExpressions, func(r metav1.LabelSelectorRequirement) bool { return equality.Semantic.DeepEqual(r, never) }) {
		sel.MatchExpressions = append(sel.MatchExpressions, never)
	}
	return webhookScope{enabled: enabled, namespaces: sel, names: namesOfWebhookConfigurations(cfg)}
}

// entry is what scoping reads and writes of one webhook entry, of either
// configuration kind.
type entry struct {
	name       *string
	namespaces **metav1.LabelSelector
	client     *admissionv1.WebhookClientConfig
}

// scopeEntries brings live entries in line: the wanted integrations' ones
// present (from the generated ones) with the scope's namespaces, the
// others gone. It reports whether anything changed.
func scopeEntries[W any](s webhookScope, live, generated []W, view func(*W) entry) ([]W, bool, error) {
	var out []W
	changed := false
	seen := map[string]bool{}
	var template *admissionv1.WebhookClientConfig
	for i := range live {
		e := view(&live[i])
		seen[*e.name] = true
		if template == nil {
			template = e.client
		}
		isIntegration, enabled := s.entryEnabled(*e.name)
		if !isIntegration {
			out = append(out, live[i])
			continue
		}
		if !enabled {
			changed = true
			continue
		}
		if !equality.Semantic.DeepEqual(*e.namespaces, s.namespaces) {
			*e.namespaces = s.namespaces.DeepCopy()
			changed = true
		}
		out = append(out, live[i])
	}
	for i := range generated {
		w := generated[i]
		e := view(&w)
		if _, enabled := s.entryEnabled(*e.name); !enabled || seen[*e.name] {
			continue
		}
		if template == nil {
			return nil, false, fmt.Errorf("no live webhook to take the service from for %s", *e.name)
		}
		if err := pointLike(e.client, template); err != nil {
			return nil, false, err
		}
		*e.namespaces = s.namespaces.DeepCopy()
		out = append(out, w)
		changed = true
	}
	return out, changed, nil
}

// entryEnabled tells whether a webhook entry is an integration's, and
// whether one of the integrations that need it is enabled (a JobSet's is
// needed by the kinds that run as JobSets too).
func (s webhookScope) entryEnabled(name string) (isIntegration, enabled bool) {
	frameworks, isIntegration := kinds.FrameworksOfWebhook(name)
	return isIntegration, slices.ContainsFunc(frameworks, func(fw string) bool { return s.enabled[fw] })
}

// pointLike makes a generated entry's client config reach the same server
// as a live one (its service or URL, and CA), at the generated path.
func pointLike(generated, live *admissionv1.WebhookClientConfig) error {
	path := ""
	if generated.Service != nil && generated.Service.Path != nil {
		path = *generated.Service.Path
	}
	out := live.DeepCopy()
	switch {
	case out.Service != nil:
		out.Service.Path = &path
	case out.URL != nil:
		u, err := url.Parse(*out.URL)
		if err != nil {
			return fmt.Errorf("parsing webhook URL %q: %w", *out.URL, err)
		}
		u.Path = path
		s := u.String()
		out.URL = &s
	}
	*generated = *out
	return nil
}

// scopeWebhooks applies the scope to the installed configurations, once at
// startup. A configuration that isn't installed (webhooks served for a
// test without one, or installed under other names) is left alone. reader
// reads from the API server: the versions written must be current.
func scopeWebhooks(ctx context.Context, reader client.Reader, writer client.Writer, s webhookScope) error {
	genMutating, err := config.MutatingWebhooks()
	if err != nil {
		return err
	}
	genValidating, err := config.ValidatingWebhooks()
	if err != nil {
		return err
	}
	mutating := &admissionv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: s.names.mutating}}
	err = scopeConfiguration(ctx, reader, writer, s, mutating, &mutating.Webhooks, genMutating[0].Webhooks,
		func(w *admissionv1.MutatingWebhook) entry {
			return entry{name: &w.Name, namespaces: &w.NamespaceSelector, client: &w.ClientConfig}
		})
	if err != nil {
		return err
	}
	validating := &admissionv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: s.names.validating}}
	return scopeConfiguration(ctx, reader, writer, s, validating, &validating.Webhooks, genValidating[0].Webhooks,
		func(w *admissionv1.ValidatingWebhook) entry {
			return entry{name: &w.Name, namespaces: &w.NamespaceSelector, client: &w.ClientConfig}
		})
}

// scopeConfiguration reads one configuration into obj (whose webhooks is
// its list), scopes it and writes it back if that changed anything.
func scopeConfiguration[W any](ctx context.Context, reader client.Reader, writer client.Writer, s webhookScope,
	obj client.Object, webhooks *[]W, generated []W, view func(*W) entry) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := reader.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return client.IgnoreNotFound(err)
		}
		scoped, changed, err := scopeEntries(s, *webhooks, generated, view)
		if err != nil || !changed {
			return err
		}
		*webhooks = scoped
		return writer.Update(ctx, obj)
	})
	if err != nil {
		return fmt.Errorf("scoping webhook configuration %s: %w", obj.GetName(), err)
	}
	return nil
}
