package manager

import (
	"context"
	"errors"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// selfUser is the user name the API server knows the manager's requests
// by: some writes are sluice's alone (a Pod's admission gate comes off only
// when sluice's admission says so), and the webhooks refuse them from
// anyone else.
func selfUser(ctx context.Context, restConfig *rest.Config) (string, error) {
	clientset, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return "", fmt.Errorf("learning the user sluice acts as: %w", err)
	}
	review, err := clientset.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("learning the user sluice acts as (a SelfSubjectReview): %w", err)
	}
	if review.Status.UserInfo.Username == "" {
		return "", errors.New("learning the user sluice acts as: the API server's SelfSubjectReview names no user")
	}
	return review.Status.UserInfo.Username, nil
}
