package controllers

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// The kinds sluice serves but does not act on yet (Topology) apply as a
// Kueue user's manifests hold them; a ClusterQueue that would need one is
// inactive and says so. So is one whose check can't run, even if a third
// party marks the check active: a ProvisioningRequest check in a cluster
// that does not serve ProvisioningRequests (this one doesn't), a
// MultiKueue check whose only worker can't be reached (its Secret is
// missing): sluice marks the check inactive again.
func TestQueuesUsingWhatSluiceDoesNotImplementAreInactive(t *testing.T) {
	ctx := context.Background()
	create(t, &kueue.Topology{ObjectMeta: metav1.ObjectMeta{Name: "dc"}, Spec: kueue.TopologySpec{Levels: []kueue.TopologyLevel{
		{NodeLabel: "cloud.example.com/block"}, {NodeLabel: "kubernetes.io/hostname"}}}})
	create(t, &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "tas-flavor"}, Spec: kueue.ResourceFlavorSpec{
		NodeLabels: map[string]string{"pool": "tas"}, TopologyName: ptr.To("dc")}})
	tas := clusterQueue("cq-tas", "", "tas-flavor")
	create(t, tas)
	waitForActive(t, tas, func() []metav1.Condition { return tas.Status.Conditions }, metav1.ConditionFalse, kueue.ReasonNotImplemented,
		"tas-flavor (topology dc)", "topology-aware scheduling")

	create(t, &kueue.ProvisioningRequestConfig{ObjectMeta: metav1.ObjectMeta{Name: "prc"},
		Spec: kueue.ProvisioningRequestConfigSpec{ProvisioningClassName: "check-capacity.autoscaling.x-k8s.io"}})
	create(t, &kueue.MultiKueueCluster{ObjectMeta: metav1.ObjectMeta{Name: "worker"}, Spec: kueue.MultiKueueClusterSpec{
		ClusterSource: kueue.ClusterSource{KubeConfig: &kueue.KubeConfig{Location: "worker-secret"}}}})
	create(t, &kueue.MultiKueueConfig{ObjectMeta: metav1.ObjectMeta{Name: "mk"}, Spec: kueue.MultiKueueConfigSpec{Clusters: []string{"worker"}}})
	for _, check := range []struct{ name, controller, kind, params, why string }{
		{"prov", kueue.ProvisioningRequestControllerName, "ProvisioningRequestConfig", "prc", "AdmissionCheck prov is not active"},
		{"multi", kueue.MultiKueueControllerName, "MultiKueueConfig", "mk", "AdmissionCheck multi is not active"},
	} {
		create(t, &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: check.name + "-flavor"}})
		ac := &kueue.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: check.name}, Spec: kueue.AdmissionCheckSpec{ControllerName: check.controller,
			Parameters: &kueue.AdmissionCheckParametersReference{APIGroup: kueue.GroupVersion.Group, Kind: check.kind, Name: check.params}}}
		create(t, ac)
		// Even marked active by someone else, the check is not run here.
		// (sluice writes the provisioning check's condition too: retried.)
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(ac), ac); err != nil {
				return err
			}
			meta.SetStatusCondition(&ac.Status.Conditions, metav1.Condition{Type: kueue.ConditionActive, Status: metav1.ConditionTrue, Reason: "Active", Message: "ready"})
			return cluster.Client.Status().Update(ctx, ac)
		})
		if err != nil {
			t.Fatal(err)
		}
		cq := clusterQueue("cq-"+check.name, "", check.name+"-flavor")
		cq.Spec.AdmissionChecksStrategy = &kueue.AdmissionChecksStrategy{AdmissionChecks: []kueue.AdmissionCheckStrategyRule{{Name: check.name}}}
		create(t, cq)
		waitForActive(t, cq, func() []metav1.Condition { return cq.Status.Conditions }, metav1.ConditionFalse, kueue.ReasonAdmissionCheckInactive,
			check.why)
	}
	prov := &kueue.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: "prov"}}
	waitForActive(t, prov, func() []metav1.Condition { return prov.Status.Conditions }, metav1.ConditionFalse, "ProvisioningRequestsNotServed",
		"does not serve autoscaling.x-k8s.io/v1 ProvisioningRequests")
	multi := &kueue.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: "multi"}}
	waitForActive(t, multi, func() []metav1.Condition { return multi.Status.Conditions }, metav1.ConditionFalse, "NoUsableClusters",
		"Inactive clusters: [worker]")
	worker := &kueue.MultiKueueCluster{ObjectMeta: metav1.ObjectMeta{Name: "worker"}}
	waitForActive(t, worker, func() []metav1.Condition { return worker.Status.Conditions }, metav1.ConditionFalse, "BadKubeConfig",
		"worker-secret not found")
}
