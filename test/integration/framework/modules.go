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
	return moduleDirIn("", module)
}

// trainerModule is the module (hack/trainer) that pins the Kubeflow
// trainer, whose Go packages sluice can't be built with; `make addons`
// downloads it.
const trainerModule = "hack/trainer"

// moduleDirIn is ModuleDir for a module that the module in the repository
// folder dir ("": sluice's own) requires.
func moduleDirIn(dir, module string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module)
	cmd.Dir = filepath.Join(root, filepath.FromSlash(dir))
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locating module %s (required by %s): %w", module, cmd.Dir, err)
	}
	if strings.TrimSpace(string(out)) == "" {
		return "", fmt.Errorf("module %s is not downloaded: run make addons", module)
	}
	return strings.TrimSpace(string(out)), nil
}

// InstallTrainerCRDs installs the Kubeflow trainer's
// CustomResourceDefinitions (TrainJob, TrainingRuntime,
// ClusterTrainingRuntime), as published in its module, and waits until
// they are served.
func (c *Cluster) InstallTrainerCRDs() error {
	dir, err := moduleDirIn(trainerModule, "github.com/kubeflow/trainer/v2")
	if err != nil {
		return err
	}
	return c.installCRDs("github.com/kubeflow/trainer/v2", filepath.Join(dir, "manifests", "base", "crds"))
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
	return c.installCRDs(module, filepath.Join(dir, filepath.FromSlash(folder)))
}

func (c *Cluster) installCRDs(module, path string) error {
	if _, err := envtest.InstallCRDs(c.RestConfig, envtest.CRDInstallOptions{Paths: []string{path}}); err != nil {
		return fmt.Errorf("installing the CustomResourceDefinitions of %s: %w", module, err)
	}
	return nil
}
