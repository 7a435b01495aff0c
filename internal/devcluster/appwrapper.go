package devcluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// The AppWrapper controller reads its configuration from a ConfigMap of the
// namespace $NAMESPACE names, and its only flags are the ConfigMap's name
// and the kubeconfig.
const (
	appWrapperConfigNamespace = "kube-system"
	appWrapperConfigMap       = "appwrapper-operator-config"
	// appWrapperWebhookPort is where its webhook server listens, always.
	appWrapperWebhookPort = 9443
)

func appWrapperFlags(kubeconfig, probe string) ([]string, string) {
	return []string{"--kubeconfig=" + kubeconfig, "--config=" + appWrapperConfigMap}, "http://" + probe + "/readyz"
}

// appWrapperConfig writes the controller's configuration: the settings the
// other addons get (no leader election, no metrics, health on the probe
// address), and no webhooks of its own. Its webhooks would default and
// check AppWrappers (sluice's do that for the queued ones) behind
// certificates it rotates itself in the cluster; without them it manages
// no certificate either. What the configuration leaves out keeps the
// controller's defaults.
func appWrapperConfig(ctx context.Context, cl client.Client, probe string) error {
	data, err := yaml.Marshal(map[string]any{
		"webhooksEnabled": false,
		"controllerManager": map[string]any{
			"metrics":        map[string]any{"bindAddress": "0"},
			"health":         map[string]any{"bindAddress": probe},
			"leaderElection": false,
		},
	})
	if err != nil {
		return fmt.Errorf("writing the AppWrapper controller's configuration: %w", err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: appWrapperConfigNamespace, Name: appWrapperConfigMap},
		Data: map[string]string{"config.yaml": string(data)}}
	if err := cl.Create(ctx, cm); err != nil {
		return fmt.Errorf("creating the AppWrapper controller's configuration %s/%s: %w", cm.Namespace, cm.Name, err)
	}
	return nil
}
