package api

import (
	"fmt"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// Valid objects that each rule of the table breaks in one place.

var nameSeq atomic.Int32

func uniqueName(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, nameSeq.Add(1))
}

func quota(name corev1.ResourceName, nominal string) kueue.ResourceQuota {
	return kueue.ResourceQuota{Name: name, NominalQuota: resource.MustParse(nominal)}
}

func validFlavor() *kueue.ResourceFlavor {
	return &kueue.ResourceFlavor{
		ObjectMeta: metav1.ObjectMeta{Name: uniqueName("rf")},
		Spec: kueue.ResourceFlavorSpec{
			NodeLabels:  map[string]string{"instance-type": "spot"},
			NodeTaints:  []corev1.Taint{{Key: "spot", Value: "true", Effect: corev1.TaintEffectNoSchedule}},
			Tolerations: []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		},
	}
}

func validClusterQueue() *kueue.ClusterQueue {
	return &kueue.ClusterQueue{
		ObjectMeta: metav1.ObjectMeta{Name: uniqueName("cq")},
		Spec: kueue.ClusterQueueSpec{
			CohortName:        "pool",
			NamespaceSelector: &metav1.LabelSelector{},
			ResourceGroups: []kueue.ResourceGroup{
				{
					CoveredResources: []corev1.ResourceName{"cpu", "memory"},
					Flavors: []kueue.FlavorQuotas{{
						Name:      "on-demand",
						Resources: []kueue.ResourceQuota{quota("cpu", "10"), quota("memory", "10Gi")},
					}},
				},
				{
					CoveredResources: []corev1.ResourceName{"nvidia.com/gpu"},
					Flavors:          []kueue.FlavorQuotas{{Name: "a100", Resources: []kueue.ResourceQuota{quota("nvidia.com/gpu", "8")}}},
				},
			},
		},
	}
}

func validCohort() *kueue.Cohort {
	return &kueue.Cohort{
		ObjectMeta: metav1.ObjectMeta{Name: uniqueName("cohort")},
		Spec: kueue.CohortSpec{
			ResourceGroups: []kueue.ResourceGroup{{
				CoveredResources: []corev1.ResourceName{"cpu"},
				Flavors:          []kueue.FlavorQuotas{{Name: "on-demand", Resources: []kueue.ResourceQuota{quota("cpu", "4")}}},
			}},
		},
	}
}

func validLocalQueue() *kueue.LocalQueue {
	return &kueue.LocalQueue{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: uniqueName("lq")},
		Spec:       kueue.LocalQueueSpec{ClusterQueue: "team-cq"},
	}
}

func validPriorityClass() *kueue.WorkloadPriorityClass {
	return &kueue.WorkloadPriorityClass{
		ObjectMeta:  metav1.ObjectMeta{Name: uniqueName("wpc")},
		Value:       100,
		Description: "batch",
	}
}

func validAdmissionCheck() *kueue.AdmissionCheck {
	return &kueue.AdmissionCheck{
		ObjectMeta: metav1.ObjectMeta{Name: uniqueName("ac")},
		Spec:       kueue.AdmissionCheckSpec{ControllerName: "example.com/check"},
	}
}

func podSet(name string, count int32, cpu string) kueue.PodSet {
	return kueue.PodSet{
		Name:  kueue.PodSetReference(name),
		Count: count,
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name:      "main",
				Image:     "busybox",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": resource.MustParse(cpu)}},
			}},
		}},
	}
}

func validWorkload() *kueue.Workload {
	return &kueue.Workload{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: uniqueName("wl")},
		Spec: kueue.WorkloadSpec{
			QueueName: "team-queue",
			PodSets:   []kueue.PodSet{podSet("main", 4, "1")},
		},
	}
}

// reservedStatus is what a scheduler writes when it reserves quota.
func reservedStatus(wl *kueue.Workload) kueue.WorkloadStatus {
	status := kueue.WorkloadStatus{
		Conditions: []metav1.Condition{{
			Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved",
			Message: "reserved", LastTransitionTime: metav1.Now(),
		}},
		Admission: &kueue.Admission{ClusterQueue: "team-cq"},
	}
	for _, ps := range wl.Spec.PodSets {
		status.Admission.PodSetAssignments = append(status.Admission.PodSetAssignments, kueue.PodSetAssignment{
			Name:    ps.Name,
			Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{"cpu": "on-demand"},
			Count:   ptr.To(ps.Count),
		})
	}
	return status
}

func manyNodeLabels(n int) map[string]string {
	labels := map[string]string{}
	for i := range n {
		labels[fmt.Sprintf("label-%d", i)] = "x"
	}
	return labels
}

// groupsWithFlavors builds groups of one resource each, perGroup flavors per
// group, all flavor names distinct.
func groupsWithFlavors(groups, perGroup int) []kueue.ResourceGroup {
	var out []kueue.ResourceGroup
	for g := range groups {
		res := corev1.ResourceName(fmt.Sprintf("example.com/res-%d", g))
		rg := kueue.ResourceGroup{CoveredResources: []corev1.ResourceName{res}}
		for f := range perGroup {
			rg.Flavors = append(rg.Flavors, kueue.FlavorQuotas{
				Name:      kueue.ResourceFlavorReference(fmt.Sprintf("f-%d-%d", g, f)),
				Resources: []kueue.ResourceQuota{quota(res, "1")},
			})
		}
		out = append(out, rg)
	}
	return out
}
