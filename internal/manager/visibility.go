package manager

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	"github.com/sluicehq/sluice/internal/visibility"
)

// +kubebuilder:rbac:groups=apiregistration.k8s.io,resources=apiservices,verbs=get;list;watch;update;patch

// visibilityAPIServices are the APIServices of the visibility API; the
// certificate rotator writes its CA into them.
var visibilityAPIServices = []string{"v1beta1.visibility.kueue.x-k8s.io", "v1beta2.visibility.kueue.x-k8s.io"}

// visibilityEnabled: the VisibilityOnDemand gate, on unless turned off.
func visibilityEnabled(cfg *configapi.Configuration) bool {
	on, set := cfg.FeatureGates[configapi.VisibilityOnDemandGate]
	return !set || on
}

// visibilityService is the Service the APIServices point at, which the
// serving certificate must name: as the installed APIService says; before
// one is installed, named like the webhook Service of the same install
// (sluice-webhook-service: sluice-visibility-server).
func visibilityService(ctx context.Context, reader client.Reader, cfg *configapi.Configuration) (types.NamespacedName, error) {
	apiService := &unstructured.Unstructured{}
	apiService.SetAPIVersion("apiregistration.k8s.io/v1")
	apiService.SetKind("APIService")
	err := reader.Get(ctx, types.NamespacedName{Name: visibilityAPIServices[1]}, apiService)
	switch {
	case err == nil:
		name, _, _ := unstructured.NestedString(apiService.Object, "spec", "service", "name")
		namespace, _, _ := unstructured.NestedString(apiService.Object, "spec", "service", "namespace")
		if name != "" && namespace != "" {
			return types.NamespacedName{Namespace: namespace, Name: name}, nil
		}
	case !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err):
		return types.NamespacedName{}, fmt.Errorf("reading APIService %s: %w", visibilityAPIServices[1], err)
	}
	webhookService := *cfg.InternalCertManagement.WebhookServiceName
	return types.NamespacedName{Namespace: *cfg.Namespace, Name: strings.TrimSuffix(webhookService, "webhook-service") + "visibility-server"}, nil
}

// addVisibilityServer runs the visibility API server on every replica,
// once certsReady is closed (nil: at once). It serves with the webhook
// server's certificate (certDir), which names the visibility Service too;
// without one (webhooks off), with a self-signed one.
func addVisibilityServer(mgr ctrl.Manager, restConfig *rest.Config, cfg *configapi.Configuration, source visibility.Source, certDir string, certsReady <-chan struct{}) error {
	opts := visibility.Options{BindPort: int(*cfg.VisibilityServer.BindPort), CertDir: certDir}
	if a := cfg.VisibilityServer.BindAddress; a != nil {
		opts.BindAddress = *a
	}
	return mgr.Add(runnableFunc(func(ctx context.Context) error {
		if certsReady != nil {
			select {
			case <-certsReady:
			case <-ctx.Done():
				return nil
			}
		}
		dir, err := os.MkdirTemp("", "sluice-visibility-")
		if err != nil {
			return fmt.Errorf("creating the visibility server's directory: %w", err)
		}
		defer func() { _ = os.RemoveAll(dir) }()
		opts.WorkDir = dir
		server, err := retryUntilBuilt(ctx, func() (*visibility.Server, error) { return visibility.New(restConfig, source, opts) })
		if err != nil || server == nil {
			return err
		}
		return server.Start(ctx)
	}))
}

// retryUntilBuilt calls build until it succeeds or ctx ends (nil, nil):
// the visibility server reads the cluster's authentication configuration
// when built, and an API server out of reach for a while at startup must
// not stop the manager, whose admission does not need the visibility API.
func retryUntilBuilt[T any](ctx context.Context, build func() (*T, error)) (*T, error) {
	wait := time.Second
	for {
		built, err := build()
		if err == nil {
			return built, nil
		}
		ctrl.LoggerFrom(ctx).Error(err, "building the visibility server; retrying", "in", wait)
		select {
		case <-ctx.Done():
			return nil, nil
		case <-time.After(wait):
		}
		wait = min(2*wait, 30*time.Second)
	}
}
