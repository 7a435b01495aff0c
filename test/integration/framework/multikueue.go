package framework

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// AdminKubeconfig renders a kubeconfig of a cluster admin, its
// credentials embedded (what a MultiKueueCluster's Secret holds).
func (c *Cluster) AdminKubeconfig() ([]byte, error) {
	admin, err := c.Env.AddUser(envtest.User{Name: "multikueue-admin", Groups: []string{"system:masters"}}, c.RestConfig)
	if err != nil {
		return nil, fmt.Errorf("creating the admin user: %w", err)
	}
	return admin.KubeConfig()
}

// PutSecret creates or replaces a Secret holding data under key, creating
// its namespace if needed.
func (c *Cluster) PutSecret(ctx context.Context, namespace, name, key string, data []byte) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if err := c.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", namespace, err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: map[string][]byte{key: data}}
	err := c.Client.Create(ctx, secret)
	if apierrors.IsAlreadyExists(err) {
		err = c.Client.Update(ctx, secret)
	}
	if err != nil {
		return fmt.Errorf("writing Secret %s/%s: %w", namespace, name, err)
	}
	return nil
}
