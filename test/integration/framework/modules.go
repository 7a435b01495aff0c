package framework

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// ModuleDir is where a module sluice requires sits in the module cache
// (go list, offline: the build already downloaded it).
func ModuleDir(module string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locating module %s: %w", module, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// InstallProvisioningRequestCRD installs the autoscaler's
// ProvisioningRequest CustomResourceDefinition, as published in its API
// module, and waits until it is served.
func (c *Cluster) InstallProvisioningRequestCRD() error {
	return c.InstallModuleCRDs("k8s.io/autoscaler/cluster-autoscaler/apis", "config/crd")
}

// InstallJobSetCRD installs JobSet's CustomResourceDefinition, as published
// in its module, and waits until it is served.
func (c *Cluster) InstallJobSetCRD() error {
	return c.InstallModuleCRDs("sigs.k8s.io/jobset", "config/components/crd/bases")
}

// InstallModuleCRDs installs the CustomResourceDefinitions in a folder of
// a module sluice requires, and waits until they are served.
func (c *Cluster) InstallModuleCRDs(module, folder string) error {
	dir, err := ModuleDir(module)
	if err != nil {
		return err
	}
	if _, err := envtest.InstallCRDs(c.RestConfig, envtest.CRDInstallOptions{Paths: []string{filepath.Join(dir, filepath.FromSlash(folder))}}); err != nil {
		return fmt.Errorf("installing the CustomResourceDefinitions of %s: %w", module, err)
	}
	return nil
}
