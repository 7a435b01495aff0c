package devcluster

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/childproc"
)

// kwokStages are the stage machine of the simulated kubelet.
//
//go:embed kwok-stages.yaml
var kwokStages []byte

// componentTimeout bounds how long one component may take to be healthy.
const componentTimeout = time.Minute

// controllers are the kube-controller-manager controllers a dev cluster
// runs: what Jobs, Deployments, StatefulSets, namespaces, service accounts,
// garbage collection, simulated nodes and the aggregated user roles need.
var controllers = []string{
	"clusterrole-aggregation-controller",
	"job-controller",
	"cronjob-controller",
	"garbage-collector-controller",
	"pod-garbage-collector-controller",
	"replicaset-controller",
	"deployment-controller",
	"statefulset-controller",
	"namespace-controller",
	"serviceaccount-controller",
	"serviceaccount-token-controller",
	"node-lifecycle-controller",
	"disruption-controller",
	"ttl-after-finished-controller",
}

// componentSpec is how to run one upstream component next to the API server.
type componentSpec struct {
	name   string
	binary string
	args   []string
	// env are variables added to the component's environment.
	env    []string
	health string // URL
}

// clusterFiles are the files the components share.
type clusterFiles struct {
	assets, dataDir, logDir string
	kubeconfig              string
	// certDir is the API server's: it holds the service-account signing key.
	certDir string
	caFile  string
}

// secureComponentSpec runs a component that serves its health over HTTPS
// on a free local port and talks to the API server as admin, without leader
// election; extra are its own flags.
func secureComponentSpec(name string, f clusterFiles, extra ...string) (componentSpec, error) {
	addr, err := childproc.FreeLocalAddress()
	if err != nil {
		return componentSpec{}, err
	}
	host, port := splitHostPort(addr)
	return componentSpec{
		name:   name,
		binary: filepath.Join(f.assets, name),
		args: append([]string{
			"--kubeconfig=" + f.kubeconfig,
			"--authentication-kubeconfig=" + f.kubeconfig,
			"--authorization-kubeconfig=" + f.kubeconfig,
			"--bind-address=" + host,
			"--secure-port=" + port,
			"--leader-elect=false",
		}, extra...),
		health: "https://" + addr + "/healthz",
	}, nil
}

func controllerManagerSpec(f clusterFiles) (componentSpec, error) {
	return secureComponentSpec("kube-controller-manager", f,
		"--controllers="+strings.Join(controllers, ","),
		"--service-account-private-key-file="+filepath.Join(f.certDir, "sa-signer.key"),
		"--root-ca-file="+f.caFile,
		"--use-service-account-credentials=false",
		"--cluster-name=sluice-dev",
	)
}

func schedulerSpec(f clusterFiles) (componentSpec, error) {
	return secureComponentSpec("kube-scheduler", f)
}

// kwokSpec runs kwok on the nodes sluice dev creates (annotated
// kwokNodeAnnotation), with sluice's stages.
func kwokSpec(f clusterFiles) (componentSpec, error) {
	addr, err := childproc.FreeLocalAddress()
	if err != nil {
		return componentSpec{}, err
	}
	stages := filepath.Join(f.dataDir, "kwok-stages.yaml")
	if err := os.WriteFile(stages, kwokStages, 0o644); err != nil {
		return componentSpec{}, fmt.Errorf("writing kwok's stages: %w", err)
	}
	return componentSpec{
		name:   "kwok",
		binary: filepath.Join(f.assets, "kwok"),
		args: []string{
			"--kubeconfig=" + f.kubeconfig,
			"--config=" + stages,
			"--manage-nodes-with-annotation-selector=" + kwokNodeAnnotation + "=fake",
			"--node-ip=10.244.0.1",
			"--server-address=" + addr,
		},
		health: "http://" + addr + "/healthz",
	}, nil
}

// startComponent starts spec and waits until its health endpoint answers.
func startComponent(ctx context.Context, spec componentSpec, logDir string) (*childproc.Process, error) {
	proc, err := childproc.StartWithEnv(spec.name, spec.binary, spec.args, spec.env, filepath.Join(logDir, spec.name+".log"))
	if err != nil {
		return nil, err
	}
	if err := proc.WaitHealthy(ctx, spec.health, componentTimeout); err != nil {
		proc.Stop(5 * time.Second)
		return nil, err
	}
	return proc, nil
}

func splitHostPort(addr string) (string, string) {
	i := strings.LastIndex(addr, ":")
	return addr[:i], addr[i+1:]
}
