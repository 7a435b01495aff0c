package bench

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/workload"
)

// Names of the objects a run creates besides the plan's queues.
const (
	flavorName      = "sluice-bench"
	namespace       = "sluice-bench"
	replayNamespace = "sluice-bench-replay"
	podSetName      = "main"
)

func milliCPU(m int64) resource.Quantity { return *resource.NewMilliQuantity(m, resource.DecimalSI) }

func newFlavor() *kueue.ResourceFlavor {
	return &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: flavorName}}
}

func newNamespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// newClusterQueue is a planned queue: CPU only, one flavor, open to every
// namespace.
func newClusterQueue(q PlannedQueue) *kueue.ClusterQueue {
	quota := kueue.ResourceQuota{Name: corev1.ResourceCPU, NominalQuota: milliCPU(q.NominalMilliCPU)}
	if q.BorrowingMilliCPU != nil {
		quota.BorrowingLimit = ptr.To(milliCPU(*q.BorrowingMilliCPU))
	}
	cq := &kueue.ClusterQueue{
		ObjectMeta: metav1.ObjectMeta{Name: q.Name},
		Spec: kueue.ClusterQueueSpec{
			CohortName:        kueue.CohortReference(q.Cohort),
			NamespaceSelector: &metav1.LabelSelector{},
			ResourceGroups: []kueue.ResourceGroup{{
				CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
				Flavors: []kueue.FlavorQuotas{{
					Name:      flavorName,
					Resources: []kueue.ResourceQuota{quota},
				}},
			}},
		},
	}
	if q.ReclaimWithinCohort != "" || q.WithinClusterQueue != "" {
		cq.Spec.Preemption = &kueue.ClusterQueuePreemption{
			ReclaimWithinCohort: kueue.PreemptionPolicy(q.ReclaimWithinCohort),
			WithinClusterQueue:  kueue.PreemptionPolicy(q.WithinClusterQueue),
		}
	}
	return cq
}

// newLocalQueue points the namespace's queue of the same name at q.
func newLocalQueue(ns string, q PlannedQueue) *kueue.LocalQueue {
	return &kueue.LocalQueue{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: q.Name},
		Spec:       kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(q.Name)},
	}
}

// newWorkload is a planned workload: one pod asking for its CPU.
func newWorkload(ns string, w PlannedWorkload) *kueue.Workload {
	return &kueue.Workload{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: w.Name},
		Spec: kueue.WorkloadSpec{
			QueueName: kueue.LocalQueueName(w.Queue),
			Priority:  ptr.To(w.Priority),
			PodSets: []kueue.PodSet{{
				Name:  podSetName,
				Count: 1,
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name:  "main",
						Image: "registry.k8s.io/pause:3.10",
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceCPU: milliCPU(w.RequestMilliCPU),
						}},
					}},
				}},
			}},
		},
	}
}

// admit sets on wl the admission the manager would write for it, for the
// API ceiling's replay.
func admit(wl *kueue.Workload, w PlannedWorkload, now time.Time) {
	workload.SetReserved(wl, &kueue.Admission{
		ClusterQueue: kueue.ClusterQueueReference(w.Queue),
		PodSetAssignments: []kueue.PodSetAssignment{{
			Name:          podSetName,
			Flavors:       map[corev1.ResourceName]kueue.ResourceFlavorReference{corev1.ResourceCPU: flavorName},
			ResourceUsage: corev1.ResourceList{corev1.ResourceCPU: milliCPU(w.RequestMilliCPU)},
			Count:         ptr.To[int32](1),
		}},
	}, nil, now)
}
