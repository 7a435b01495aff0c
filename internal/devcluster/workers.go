package devcluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/apis/scheme"
	"github.com/sluicehq/sluice/config"
)

// WorkerLinePrefix starts the line `sluice dev --workers` prints for each
// worker cluster once everything answers.
const WorkerLinePrefix = "sluice dev worker: "

// Names of what `sluice dev --workers` makes in the manager cluster.
const (
	DevMultiKueueConfig = "workers"
	DevMultiKueueCheck  = "multikueue"
)

// WorkerName is the MultiKueueCluster name of the i-th worker (from 1).
func WorkerName(i int) string { return fmt.Sprintf("worker-%d", i) }

// Multi is a manager cluster and its worker clusters.
type Multi struct {
	Manager *Cluster
	Workers []*Cluster
}

// StartMulti starts opts.Workers worker clusters, each a whole local
// cluster with sluice and the sample queues, then the manager cluster,
// where it writes a Secret and a MultiKueueCluster per worker, a
// MultiKueueConfig listing them and a MultiKueue AdmissionCheck, and puts
// that check on the sample ClusterQueues: Jobs sent to the sample queues
// of the manager run in the workers. It returns once the sample queues of
// every cluster are active again.
func StartMulti(ctx context.Context, opts Options) (_ *Multi, err error) {
	m := &Multi{}
	defer func() {
		if err != nil {
			_ = m.Stop()
		}
	}()
	base := opts.DataDir
	if base != "" {
		if err := os.MkdirAll(base, 0o755); err != nil {
			return nil, fmt.Errorf("creating --data-dir %s: %w", base, err)
		}
	} else {
		if base, err = os.MkdirTemp("", "sluice-dev-"); err != nil {
			return nil, fmt.Errorf("creating the data folder: %w", err)
		}
	}
	if !opts.Keep {
		defer func() {
			if err != nil {
				_ = os.RemoveAll(base)
			}
		}()
	}
	// One log for all the managers of this process (they share its
	// logger), set before the first one starts.
	var managersLog *os.File
	if opts.ManagerLog != nil {
		if managersLog, err = os.Create(filepath.Join(base, "managers.log")); err != nil {
			return nil, fmt.Errorf("creating the managers' log: %w", err)
		}
		opts.ManagerLog(managersLog)
		opts.ManagerLog = nil
		defer func() {
			if err != nil {
				_ = managersLog.Close()
			}
		}()
	}
	for i := 1; i <= opts.Workers; i++ {
		wopts := opts
		wopts.DataDir, wopts.KubeconfigOut, wopts.Keep = filepath.Join(base, WorkerName(i)), "", true
		wopts.ManagerLog, wopts.Workers, wopts.severalManagers = nil, 0, true
		wopts.NoSample = false
		// A worker may be killed (a drill of a lost worker): the rest goes on.
		wopts.ControlPlaneMayBeGone = true
		w, err := Start(ctx, wopts)
		if err != nil {
			return nil, fmt.Errorf("starting %s: %w", WorkerName(i), err)
		}
		m.Workers = append(m.Workers, w)
	}
	mopts := opts
	mopts.DataDir, mopts.Keep, mopts.Workers, mopts.severalManagers = filepath.Join(base, "manager"), true, 0, true
	if m.Manager, err = Start(ctx, mopts); err != nil {
		return nil, fmt.Errorf("starting the manager cluster: %w", err)
	}
	if managersLog != nil {
		m.Manager.undo = append([]func() error{managersLog.Close}, m.Manager.undo...)
	}
	if !opts.Keep {
		m.Manager.undo = append([]func() error{func() error { return os.RemoveAll(base) }}, m.Manager.undo...)
	}
	if err := m.connectWorkers(ctx, opts.NoSample); err != nil {
		return nil, err
	}
	return m, nil
}

// connectWorkers writes the MultiKueue objects into the manager cluster.
func (m *Multi) connectWorkers(ctx context.Context, noSample bool) error {
	c, err := client.New(m.Manager.RestConfig, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return fmt.Errorf("creating a client: %w", err)
	}
	cfg, err := baseManagerConfig("")
	if err != nil {
		return err
	}
	var names []string
	for i, w := range m.Workers {
		name := WorkerName(i + 1)
		kubeconfig, err := os.ReadFile(w.Kubeconfig)
		if err != nil {
			return fmt.Errorf("reading the kubeconfig of %s: %w", name, err)
		}
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: *cfg.Namespace, Name: name}, Data: map[string][]byte{"kubeconfig": kubeconfig}}
		mkc := &kueue.MultiKueueCluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kueue.MultiKueueClusterSpec{
			ClusterSource: kueue.ClusterSource{KubeConfig: &kueue.KubeConfig{Location: name, LocationType: kueue.SecretLocationType}}}}
		if err := createAll(ctx, c, secret, mkc); err != nil {
			return err
		}
		names = append(names, name)
	}
	mkConfig := &kueue.MultiKueueConfig{ObjectMeta: metav1.ObjectMeta{Name: DevMultiKueueConfig}, Spec: kueue.MultiKueueConfigSpec{Clusters: names}}
	check := &kueue.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: DevMultiKueueCheck}, Spec: kueue.AdmissionCheckSpec{
		ControllerName: kueue.MultiKueueControllerName,
		Parameters:     &kueue.AdmissionCheckParametersReference{APIGroup: kueue.GroupVersion.Group, Kind: "MultiKueueConfig", Name: mkConfig.Name}}}
	if err := createAll(ctx, c, mkConfig, check); err != nil {
		return err
	}
	if noSample {
		return nil
	}
	objs, err := config.SampleQueues()
	if err != nil {
		return err
	}
	var queues []string
	for _, obj := range objs {
		if cq, ok := obj.(*kueue.ClusterQueue); ok {
			queues = append(queues, cq.Name)
			current := &kueue.ClusterQueue{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(cq), current); err != nil {
				return fmt.Errorf("reading ClusterQueue %s: %w", cq.Name, err)
			}
			patch := client.MergeFrom(current.DeepCopy())
			current.Spec.AdmissionChecksStrategy = &kueue.AdmissionChecksStrategy{AdmissionChecks: []kueue.AdmissionCheckStrategyRule{{Name: DevMultiKueueCheck}}}
			if err := c.Patch(ctx, current, patch); err != nil {
				return fmt.Errorf("putting the MultiKueue check on ClusterQueue %s: %w", cq.Name, err)
			}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		for _, name := range queues {
			cq := &kueue.ClusterQueue{}
			if err := c.Get(ctx, client.ObjectKey{Name: name}, cq); err != nil || !meta.IsStatusConditionTrue(cq.Status.Conditions, kueue.ConditionActive) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the manager's sample ClusterQueues to be active with the MultiKueue check: %w", err)
	}
	return nil
}

func createAll(ctx context.Context, c client.Client, objs ...client.Object) error {
	for _, obj := range objs {
		if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
		}
	}
	return nil
}

// Stop stops the manager cluster, then the workers. A worker's error is
// reported on stderr, not returned: a worker that died (killed to try a
// lost worker) has already been reported, and the rest stopped cleanly.
func (m *Multi) Stop() error {
	var err error
	if m.Manager != nil {
		err = m.Manager.Stop()
	}
	for i, w := range m.Workers {
		if werr := w.Stop(); werr != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", WorkerName(i+1), werr)
		}
	}
	return err
}

// Wait blocks until ctx ends or the manager cluster dies. A worker that
// dies is reported on errOut and the rest goes on: MultiKueue sends its
// work elsewhere.
func (m *Multi) Wait(ctx context.Context, errOut io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for i, w := range m.Workers {
		go func() {
			if err := w.Wait(ctx); err != nil {
				fmt.Fprintf(errOut, "%s: %v\n", WorkerName(i+1), err)
			}
		}()
	}
	return m.Manager.Wait(ctx)
}

// printReady prints the ready line (the manager cluster's kubeconfig),
// then a line per worker.
func (m *Multi) printReady(out io.Writer) {
	fmt.Fprintf(out, "%s%s\n", ReadyLinePrefix, m.Manager.Kubeconfig)
	for i, w := range m.Workers {
		fmt.Fprintf(out, "%s%s kubeconfig=%s\n", WorkerLinePrefix, WorkerName(i+1), w.Kubeconfig)
	}
}

// runMulti is Run with worker clusters.
func runMulti(ctx context.Context, opts Options) (err error) {
	m, err := StartMulti(ctx, opts)
	if err != nil {
		return err
	}
	defer func() {
		if stopErr := m.Stop(); stopErr != nil && err == nil {
			err = stopErr
		}
	}()
	m.printReady(opts.Out)
	return m.Wait(ctx, os.Stderr)
}
