package multikueue

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/patch"
)

// Reasons of a MultiKueueCluster's Active condition beyond the kubeconfig.
const reasonMissingLocalQueues = "MissingLocalQueues"

// probeTimeout bounds one look at a worker.
const probeTimeout = 10 * time.Second

// ClusterReconciler keeps each MultiKueueCluster connected and its Active
// condition true to what the worker can do: reachable with its kubeconfig,
// serving the kueue.x-k8s.io API, and holding the LocalQueues the
// manager's dispatching queues send work to. It looks again every
// ProbeInterval, so that a worker that goes away turns inactive (and,
// after workerLostTimeout, loses its workloads) even with no event.
type ClusterReconciler struct {
	Client  client.Client
	Remotes *Remotes
	// Namespace is the manager's namespace: the only one whose Secrets
	// hold kubeconfigs.
	Namespace string
	// AllowInsecure lets kubeconfigs run exec plugins or read files
	// (feature gate MultiKueueAllowInsecureKubeconfigs).
	AllowInsecure bool
	ProbeInterval time.Duration
}

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=multikueueclusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=multikueueclusters/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=multikueueconfigs,verbs=get;list;watch
// (Secrets: read through the manager namespace's Role, config/rbac/leader_election_role.yaml; never cluster-wide.)

func (r *ClusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	mkc := &kueue.MultiKueueCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, mkc); err != nil {
		if apierrors.IsNotFound(err) {
			r.Remotes.Disconnect(req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !mkc.DeletionTimestamp.IsZero() {
		r.Remotes.Disconnect(mkc.Name)
		return ctrl.Result{}, nil
	}
	cond, err := r.connect(ctx, mkc)
	if err != nil {
		return ctrl.Result{}, err
	}
	if cond.Status != metav1.ConditionTrue {
		r.Remotes.Disconnect(mkc.Name)
	}
	if err := r.setActive(ctx, mkc, cond); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: r.ProbeInterval}, nil
}

// connect connects to the worker and probes it; it returns the Active
// condition to write (an error only for the manager's own failures).
func (r *ClusterReconciler) connect(ctx context.Context, mkc *kueue.MultiKueueCluster) (metav1.Condition, error) {
	inactive := func(reason, format string, args ...any) metav1.Condition {
		return metav1.Condition{Type: kueue.MultiKueueClusterActive, Status: metav1.ConditionFalse, Reason: reason,
			Message: fmt.Sprintf(format, args...), ObservedGeneration: mkc.Generation}
	}
	location, err := kubeconfigOf(mkc)
	if err != nil {
		return inactive(reasonUnsupported, "%v", err), nil
	}
	data, err := r.kubeconfig(ctx, location)
	if err != nil {
		if apierrors.IsNotFound(err) || errors.Is(err, errNoKubeconfigKey) {
			return inactive(reasonBadKubeConfig, "%v", err), nil
		}
		if location.LocationType == kueue.PathLocationType {
			return inactive(reasonBadKubeConfig, "%v", err), nil
		}
		return metav1.Condition{}, err
	}
	config, err := restConfigFrom(data, r.AllowInsecure)
	if err != nil {
		if errors.Is(err, errInsecure) {
			return inactive(reasonInsecure, "%v", err), nil
		}
		return inactive(reasonBadKubeConfig, "%v", err), nil
	}
	sum := sha256.Sum256(data)
	fingerprint := hex.EncodeToString(sum[:])
	probeCtx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	direct, err := r.probeClient(mkc.Name, config, fingerprint)
	if err != nil {
		return inactive(reasonConnectionFailed, "%v", err), nil
	}
	workerQueues := &kueue.LocalQueueList{}
	if err := direct.List(probeCtx, workerQueues); err != nil {
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			return inactive(reasonNoKueueAPI, "the worker does not serve %s LocalQueues and Workloads: install sluice (or Kueue) there", kueue.GroupVersion), nil
		}
		return inactive(reasonConnectionFailed, "listing the worker's LocalQueues: %v", err), nil
	}
	if err := r.Remotes.Connect(ctx, mkc.Name, config, fingerprint); err != nil {
		return inactive(reasonConnectionFailed, "%v", err), nil
	}
	missing, err := r.missingLocalQueues(ctx, mkc.Name, workerQueues)
	if err != nil {
		return metav1.Condition{}, err
	}
	if len(missing) > 0 {
		return inactive(reasonMissingLocalQueues, "the worker lacks LocalQueues that dispatching queues of the manager send work to: %s", strings.Join(missing, ", ")), nil
	}
	return metav1.Condition{Type: kueue.MultiKueueClusterActive, Status: metav1.ConditionTrue, Reason: reasonActive,
		Message: "Connected", ObservedGeneration: mkc.Generation}, nil
}

// probeClient is the connection's uncached client, or a new one while
// there is no connection (or its kubeconfig changed).
func (r *ClusterReconciler) probeClient(name string, config *rest.Config, fingerprint string) (client.Client, error) {
	if fp, direct, ok := r.Remotes.probe(name); ok && fp == fingerprint {
		return direct, nil
	}
	c, err := client.New(rest.CopyConfig(config), client.Options{Scheme: r.Remotes.Scheme})
	if err != nil {
		return nil, fmt.Errorf("creating a client: %w", err)
	}
	return c, nil
}

var errNoKubeconfigKey = errors.New("no kubeconfig key")

// kubeconfig reads a worker's kubeconfig from its Secret in the manager's
// namespace, or from a file.
func (r *ClusterReconciler) kubeconfig(ctx context.Context, location *kueue.KubeConfig) ([]byte, error) {
	if location.LocationType == kueue.PathLocationType {
		return readPath(location.Location)
	}
	secret := &corev1.Secret{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: r.Namespace, Name: location.Location}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("Secret %s/%s not found: %w", r.Namespace, location.Location, err) //nolint:staticcheck // names the object
		}
		return nil, fmt.Errorf("reading Secret %s/%s: %w", r.Namespace, location.Location, err)
	}
	data, ok := secret.Data[kubeconfigSecretKey]
	if !ok {
		return nil, fmt.Errorf("Secret %s/%s has no %q key: %w", r.Namespace, location.Location, kubeconfigSecretKey, errNoKubeconfigKey) //nolint:staticcheck // names the object
	}
	return data, nil
}

// missingLocalQueues are the manager's LocalQueues, in ClusterQueues
// dispatching to this worker, that the worker doesn't have: their
// workloads would wait there forever.
func (r *ClusterReconciler) missingLocalQueues(ctx context.Context, cluster string, worker *kueue.LocalQueueList) ([]string, error) {
	queues, err := dispatchingQueues(ctx, r.Client, cluster)
	if err != nil {
		return nil, err
	}
	have := map[types.NamespacedName]bool{}
	for i := range worker.Items {
		have[client.ObjectKeyFromObject(&worker.Items[i])] = true
	}
	var missing []string
	for _, q := range queues {
		if !have[q] {
			missing = append(missing, q.String())
		}
	}
	slices.Sort(missing)
	return missing, nil
}

func (r *ClusterReconciler) setActive(ctx context.Context, mkc *kueue.MultiKueueCluster, want metav1.Condition) error {
	if have := meta.FindStatusCondition(mkc.Status.Conditions, kueue.MultiKueueClusterActive); have != nil && have.Status == want.Status &&
		have.Reason == want.Reason && have.Message == want.Message && have.ObservedGeneration == want.ObservedGeneration {
		return nil
	}
	if _, err := patch.Status(ctx, r.Client, mkc, func() bool { return meta.SetStatusCondition(&mkc.Status.Conditions, want) }); err != nil {
		return fmt.Errorf("updating the Active condition of MultiKueueCluster %s: %w", mkc.Name, err)
	}
	return nil
}

// SetupWithManager watches MultiKueueClusters and the Secrets of the
// manager's namespace they name.
func (r *ClusterReconciler) SetupWithManager(mgr ctrl.Manager) error {
	inNamespace := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == r.Namespace })
	return ctrl.NewControllerManagedBy(mgr).
		For(&kueue.MultiKueueCluster{}).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.clustersUsing), builder.WithPredicates(inNamespace)).
		Named("multikueuecluster").
		Complete(r)
}

func (r *ClusterReconciler) clustersUsing(ctx context.Context, secret client.Object) []reconcile.Request {
	list := &kueue.MultiKueueClusterList{}
	if err := r.Client.List(ctx, list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing MultiKueueClusters")
		return nil
	}
	var out []reconcile.Request
	for _, mkc := range list.Items {
		if kc := mkc.Spec.ClusterSource.KubeConfig; kc != nil && kc.LocationType != kueue.PathLocationType && kc.Location == secret.GetName() {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: mkc.Name}})
		}
	}
	return out
}
