package framework

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	rbacv1 "k8s.io/api/rbac/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// UserRoles are the ClusterRoles of config/rbac/user_roles.yaml under the
// names the install gives them (sluice- prefixed).
func UserRoles() ([]*rbacv1.ClusterRole, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(root, "config", "rbac", "user_roles.yaml"))
	if err != nil {
		return nil, err
	}
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*rbacv1.ClusterRole
	for {
		role := &rbacv1.ClusterRole{}
		if err := decoder.Decode(role); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("user_roles.yaml: %w", err)
		}
		role.Name = "sluice-" + role.Name
		out = append(out, role)
	}
}
