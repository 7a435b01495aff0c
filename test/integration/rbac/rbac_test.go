// Package rbac runs the manager with the permissions the install gives it:
// the generated ClusterRole and the leader-election Role of config/rbac,
// bound to the manager's ServiceAccount, which the manager impersonates.
// The other suites run the manager as cluster admin and can't see a
// missing rule; here a missing rule makes a flow stall.
package rbac

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/manager"
	"github.com/sluicehq/sluice/test/integration/framework"
)

var cluster *framework.Cluster

// serviceAccount is the manager's, as config/default names it.
const serviceAccount = "sluice-controller-manager"

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	c, err := framework.StartCluster()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the cluster:", err)
		return 1
	}
	defer func() { _ = c.Stop() }()
	cfg := c.ManagerConfig()
	cfg.LeaderElection.LeaderElect = ptr.To(true) // the Lease rules too
	cfg.FairSharing = &configapi.FairSharing{}
	asManager, err := bindGeneratedRoles(context.Background(), c, *cfg.Namespace)
	if err != nil {
		fmt.Fprintln(os.Stderr, "binding the generated roles:", err)
		return 1
	}
	stop, err := c.StartManagerAs(asManager, cfg, manager.Options{EnableWebhooks: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the manager:", err)
		return 1
	}
	defer func() {
		if err := stop(); err != nil {
			fmt.Fprintln(os.Stderr, "the manager failed:", err)
		}
	}()
	cluster = c
	return m.Run()
}

// bindGeneratedRoles creates the roles of config/rbac in namespace (where
// the install puts them), binds them to the manager's ServiceAccount, and
// returns credentials that impersonate it.
func bindGeneratedRoles(ctx context.Context, c *framework.Cluster, namespace string) (*rest.Config, error) {
	root, err := framework.RepoRoot()
	if err != nil {
		return nil, err
	}
	clusterRole, role, authReader := &rbacv1.ClusterRole{}, &rbacv1.Role{}, &rbacv1.RoleBinding{}
	for file, into := range map[string]any{"rbac/role.yaml": clusterRole, "rbac/leader_election_role.yaml": role, "visibility/role_binding.yaml": authReader} {
		data, err := os.ReadFile(filepath.Join(root, "config", file))
		if err != nil {
			return nil, err
		}
		if err := yaml.Unmarshal(data, into); err != nil {
			return nil, fmt.Errorf("reading %s: %w", file, err)
		}
	}
	clusterRole.Name, role.Name, role.Namespace = "sluice-manager-role", "sluice-leader-election-role", namespace
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: serviceAccount, Namespace: namespace}}
	// The visibility server reads kube-system's authentication ConfigMap.
	authReader.Name, authReader.Subjects = "sluice-"+authReader.Name, subject
	objects := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: serviceAccount}},
		clusterRole, role,
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "sluice-manager-rolebinding"}, Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole.Name}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "sluice-leader-election-rolebinding"}, Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}},
		authReader,
	}
	for _, obj := range objects {
		if err := c.Client.Create(ctx, obj); err != nil {
			return nil, fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
		}
	}
	asManager := rest.CopyConfig(c.RestConfig)
	asManager.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + namespace + ":" + serviceAccount,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
	}
	return asManager, nil
}

func job(ns, name, lq string, priorityClass string) *batchv1.Job {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{kueue.QueueNameLabel: lq}},
		Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](2), Completions: ptr.To[int32](2), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "main", Image: "busybox",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}},
		}}}}
	if priorityClass != "" {
		j.Labels[kueue.PriorityClassLabel] = priorityClass
	}
	return j
}

func waitSuspended(t *testing.T, j *batchv1.Job, want bool) {
	t.Helper()
	framework.Eventually(t, fmt.Sprintf("%s suspended=%t", j.Name, want), func(ctx context.Context) (bool, error) {
		current := &batchv1.Job{}
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(j), current); err != nil {
			return false, err
		}
		if got := ptr.Deref(current.Spec.Suspend, false); got != want {
			return false, fmt.Errorf("suspend %t", got)
		}
		return true, nil
	})
}

// A Job is queued, admitted and started; a more urgent one preempts it,
// which suspends it; a Cohort gets its fair share in status; a plain Pod
// is gated and then let go. Each step needs rules of the generated role.
func TestTheGeneratedRoleIsEnough(t *testing.T) {
	ns := cluster.Namespace(t, nil)
	rf := framework.Flavor(cluster.Unique("flavor"), nil)
	cohort := &kueue.Cohort{ObjectMeta: metav1.ObjectMeta{Name: cluster.Unique("cohort")}}
	cq := framework.ClusterQueue(cluster.Unique("cq"), cohort.Name, framework.CPUQuota{Flavor: rf.Name, Nominal: "2"})
	cq.Spec.Preemption = &kueue.ClusterQueuePreemption{WithinClusterQueue: kueue.PreemptionPolicyLowerPriority}
	urgent := &kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: cluster.Unique("urgent")}, Value: 1000}
	cluster.MustCreate(t, rf, cohort, cq, urgent, framework.LocalQueue(ns, "lq", cq.Name))
	cluster.WaitActive(t, cq)

	low := job(ns, "low", "lq", "")
	cluster.MustCreate(t, low)
	waitSuspended(t, low, false)

	high := job(ns, "high", "lq", urgent.Name)
	cluster.MustCreate(t, high)
	waitSuspended(t, low, true)
	// The Job controller doesn't run here: the stopped Job has no pods to
	// wait for, so its quota moves and the urgent Job starts.
	waitSuspended(t, high, false)

	framework.Eventually(t, "the Cohort's fair-sharing status", func(ctx context.Context) (bool, error) {
		current := &kueue.Cohort{}
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(cohort), current); err != nil {
			return false, err
		}
		if current.Status.FairSharing == nil {
			return false, fmt.Errorf("status %+v", current.Status)
		}
		return true, nil
	})

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pod", Labels: map[string]string{kueue.QueueNameLabel: "lq"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}}}
	cluster.MustCreate(t, pod)
	framework.Eventually(t, "the Pod to be gated, queued and admitted", func(ctx context.Context) (bool, error) {
		current := &corev1.Pod{}
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(pod), current); err != nil {
			return false, err
		}
		wls := &kueue.WorkloadList{}
		if err := cluster.Client.List(ctx, wls, client.InNamespace(ns)); err != nil {
			return false, err
		}
		for _, wl := range wls.Items {
			for _, owner := range wl.OwnerReferences {
				if owner.UID == current.UID {
					return true, nil
				}
			}
		}
		return false, fmt.Errorf("no Workload for the Pod (gates %v)", current.Spec.SchedulingGates)
	})
}
