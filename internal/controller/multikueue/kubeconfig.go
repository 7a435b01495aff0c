package multikueue

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// kubeconfigSecretKey is the key of a worker's kubeconfig in its Secret.
const kubeconfigSecretKey = "kubeconfig"

// Reasons of a MultiKueueCluster's Active condition.
const (
	reasonActive           = "Active"
	reasonBadKubeConfig    = "BadKubeConfig"
	reasonInsecure         = "InsecureKubeConfig"
	reasonConnectionFailed = "ClientConnectionFailed"
	reasonNoKueueAPI       = "KueueAPINotServed"
	reasonUnsupported      = "UnsupportedClusterSource"
)

// errInsecure marks a kubeconfig refused because it would make the
// manager run a program or read a file of its own file system.
var errInsecure = errors.New("insecure kubeconfig")

// restConfigFrom parses a worker's kubeconfig. Unless allowInsecure, a
// kubeconfig that runs an exec plugin, uses an auth provider, or points
// to files (token, certificates, keys) is refused: whoever can write the
// Secret must not make sluice run a command or read its own files (its
// service account token, for one). The error never quotes credentials.
func restConfigFrom(data []byte, allowInsecure bool) (*rest.Config, error) {
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return nil, fmt.Errorf("parsing the kubeconfig: %w", redactedError(err))
	}
	if !allowInsecure {
		if err := checkSecure(cfg); err != nil {
			return nil, err
		}
	}
	rc, err := clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("building a client from the kubeconfig: %w", redactedError(err))
	}
	return rc, nil
}

// checkSecure refuses the parts of a kubeconfig that reach outside it.
func checkSecure(cfg *clientcmdapi.Config) error {
	current, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		return fmt.Errorf("%w: current-context %q names no context", errInsecure, cfg.CurrentContext)
	}
	var problems []string
	if user, ok := cfg.AuthInfos[current.AuthInfo]; ok {
		if user.Exec != nil {
			problems = append(problems, "users[].user.exec runs a command")
		}
		if user.AuthProvider != nil {
			problems = append(problems, "users[].user.auth-provider runs a provider")
		}
		for field, path := range map[string]string{"tokenFile": user.TokenFile, "client-certificate": user.ClientCertificate, "client-key": user.ClientKey} {
			if path != "" {
				problems = append(problems, "users[].user."+field+" reads a local file")
			}
		}
	}
	if cl, ok := cfg.Clusters[current.Cluster]; ok && cl.CertificateAuthority != "" {
		problems = append(problems, "clusters[].cluster.certificate-authority reads a local file")
	}
	if len(problems) == 0 {
		return nil
	}
	slices.Sort(problems)
	return fmt.Errorf("%w: %s (set the MultiKueueAllowInsecureKubeconfigs feature gate to allow it)", errInsecure, strings.Join(problems, "; "))
}

// redactedError keeps an error's kind but not its text when the text may
// quote the kubeconfig (a YAML error quotes the line it failed on).
func redactedError(err error) error {
	if strings.Contains(err.Error(), "yaml") || strings.Contains(err.Error(), "json") {
		return errors.New("the kubeconfig is not valid YAML")
	}
	return err
}

// readPath reads a kubeconfig from the manager's file system.
func readPath(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading kubeconfig file %s: %w", path, err)
	}
	return data, nil
}

// kubeconfigOf says where a MultiKueueCluster's kubeconfig is, or why it
// can't be used.
func kubeconfigOf(mkc *kueue.MultiKueueCluster) (*kueue.KubeConfig, error) {
	src := mkc.Spec.ClusterSource
	if src.KubeConfig == nil {
		return nil, errors.New("spec.clusterSource.clusterProfileRef is not supported by sluice: use spec.clusterSource.kubeConfig")
	}
	return src.KubeConfig, nil
}
