package devcluster

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluicehq/sluice/config"
)

// installUserRoles installs what the release gives the people who use
// queues: the user ClusterRoles, which the cluster's aggregation controller
// folds into view, edit and admin, so that trying RBAC on a dev cluster
// behaves as on a real install (a namespace's editor lists its
// LocalQueues). Roles left by an earlier run with --keep are kept.
func installUserRoles(ctx context.Context, c client.Client) error {
	roles, err := config.UserRoles()
	if err != nil {
		return err
	}
	for _, role := range roles {
		if err := c.Create(ctx, role); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("installing the user ClusterRole %s: %w", role.Name, err)
		}
	}
	return nil
}
