package api

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// updateRule is a rule about changes: starting from an existing object,
// breaking changes are rejected and their neighbours accepted.
type updateRule struct {
	name string
	// create returns the object to start from, created as is; setup, if set,
	// writes its initial status.
	create func() client.Object
	setup  func(obj client.Object)
	// change mutates the object; broken selects the rejected variant.
	change         func(obj client.Object, broken bool)
	status         bool // the change goes through the status subresource
	field, message string
}

func TestInvalidChangesAreRejected(t *testing.T) {
	reserve := func(obj client.Object) {
		wl := obj.(*kueue.Workload)
		wl.Status = reservedStatus(wl)
	}
	rules := []updateRule{
		{name: "flavor topologyName is immutable",
			create: func() client.Object { rf := validFlavor(); rf.Spec.TopologyName = ptr.To("dc"); return rf },
			change: func(obj client.Object, broken bool) {
				rf := obj.(*kueue.ResourceFlavor)
				if broken {
					rf.Spec.TopologyName = ptr.To("other-dc")
				} else {
					rf.Spec.NodeLabels["zone"] = "a"
				}
			}, field: "spec.topologyName", message: "immutable"},
		{name: "local queue clusterQueue is immutable",
			create: func() client.Object { return validLocalQueue() },
			change: func(obj client.Object, broken bool) {
				lq := obj.(*kueue.LocalQueue)
				if broken {
					lq.Spec.ClusterQueue = "another-cq"
				} else {
					lq.Spec.StopPolicy = ptr.To(kueue.StopPolicyHold)
				}
			}, field: "spec.clusterQueue", message: "immutable"},
		{name: "admission check controllerName is immutable",
			create: func() client.Object { return validAdmissionCheck() },
			change: func(obj client.Object, broken bool) {
				ac := obj.(*kueue.AdmissionCheck)
				if broken {
					ac.Spec.ControllerName = "example.com/other"
				} else {
					ac.Spec.Parameters = &kueue.AdmissionCheckParametersReference{APIGroup: "example.com", Kind: "Config", Name: "c"}
				}
			}, field: "spec.controllerName", message: "immutable"},
		{name: "workload queueName is frozen while quota is reserved",
			create: func() client.Object { return validWorkload() }, setup: reserve,
			change: func(obj client.Object, broken bool) {
				wl := obj.(*kueue.Workload)
				if broken {
					wl.Spec.QueueName = "other-queue"
				} else {
					wl.Spec.Active = ptr.To(false)
				}
			}, field: "spec.queueName", message: "immutable while the workload has QuotaReserved=True"},
		{name: "workload podSets are frozen while quota is reserved",
			create: func() client.Object { return validWorkload() }, setup: reserve,
			change: func(obj client.Object, broken bool) {
				wl := obj.(*kueue.Workload)
				if broken {
					wl.Spec.PodSets[0].Count = 5
				} else {
					wl.Spec.MaximumExecutionTimeSeconds = ptr.To[int32](60)
				}
			}, field: "spec.podSets", message: "immutable while the workload has QuotaReserved=True"},
		{name: "workload priority class kind is frozen while quota is reserved",
			create: func() client.Object {
				wl := validWorkload()
				wl.Spec.PriorityClassRef = &kueue.PriorityClassRef{Group: kueue.WorkloadPriorityClassGroup, Kind: kueue.WorkloadPriorityClassKind, Name: "high"}
				wl.Spec.Priority = ptr.To[int32](10)
				return wl
			}, setup: reserve,
			change: func(obj client.Object, broken bool) {
				wl := obj.(*kueue.Workload)
				if broken {
					wl.Spec.PriorityClassRef = &kueue.PriorityClassRef{Group: kueue.PodPriorityClassGroup, Kind: kueue.PodPriorityClassKind, Name: "high"}
				} else {
					wl.Spec.PriorityClassRef.Name = "higher"
				}
			}, field: "spec.priorityClassRef.kind", message: "immutable while the workload has QuotaReserved=True"},
		{name: "workload admission is immutable once set", status: true,
			create: func() client.Object { return validWorkload() }, setup: reserve,
			change: func(obj client.Object, broken bool) {
				wl := obj.(*kueue.Workload)
				if broken {
					wl.Status.Admission.ClusterQueue = "other-cq"
				} else {
					// Eviction clears the admission: allowed.
					wl.Status.Admission = nil
					meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionFalse, Reason: "Pending", Message: "evicted"})
				}
			}, field: "status.admission", message: "immutable once set"},
		{name: "workload admission has one assignment per podSet", status: true,
			create: func() client.Object { return validWorkload() },
			change: func(obj client.Object, broken bool) {
				wl := obj.(*kueue.Workload)
				wl.Status = reservedStatus(wl)
				if broken {
					wl.Status.Admission.PodSetAssignments = append(wl.Status.Admission.PodSetAssignments, kueue.PodSetAssignment{Name: "extra"})
				}
			}, field: "status.admission.podSetAssignments", message: "one entry per podSet"},
		{name: "workload reclaimablePods never exceed count", status: true,
			create: func() client.Object { return validWorkload() }, setup: reserve,
			change: func(obj client.Object, broken bool) {
				wl := obj.(*kueue.Workload)
				wl.Status.ReclaimablePods = []kueue.ReclaimablePod{{Name: "main", Count: 4}}
				if broken {
					wl.Status.ReclaimablePods[0].Count = 5
				}
			}, field: "status.reclaimablePods[0].count", message: "must not exceed the podSet's count (4)"},
		{name: "workload reclaimablePods only grow while reserved", status: true,
			create: func() client.Object { return validWorkload() },
			setup: func(obj client.Object) {
				reserve(obj)
				obj.(*kueue.Workload).Status.ReclaimablePods = []kueue.ReclaimablePod{{Name: "main", Count: 2}}
			},
			change: func(obj client.Object, broken bool) {
				wl := obj.(*kueue.Workload)
				wl.Status.ReclaimablePods[0].Count = 3
				if broken {
					wl.Status.ReclaimablePods[0].Count = 1
				}
			}, field: "status.reclaimablePods[main]", message: "can't decrease from 2 to 1"},
	}
	ctx := context.Background()
	for _, rule := range rules {
		t.Run(rule.name, func(t *testing.T) {
			obj := rule.create()
			if err := cluster.Client.Create(ctx, obj); err != nil {
				t.Fatalf("create: %v", err)
			}
			t.Cleanup(func() { _ = cluster.Client.Delete(context.Background(), obj) })
			if rule.setup != nil {
				err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
					if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
						return err
					}
					rule.setup(obj)
					return cluster.Client.Status().Update(ctx, obj)
				})
				if err != nil {
					t.Fatalf("writing the initial status: %v", err)
				}
			}
			// Each attempt starts from the latest version: queue controllers
			// write status concurrently.
			attempt := func(broken bool) error {
				return retry.RetryOnConflict(retry.DefaultRetry, func() error {
					o := obj.DeepCopyObject().(client.Object)
					if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(obj), o); err != nil {
						return err
					}
					rule.change(o, broken)
					if rule.status {
						return cluster.Client.Status().Update(ctx, o, client.DryRunAll)
					}
					return cluster.Client.Update(ctx, o, client.DryRunAll)
				})
			}
			err := attempt(true)
			if err == nil {
				t.Fatalf("the breaking change was accepted")
			}
			if !strings.Contains(err.Error(), rule.field) || !strings.Contains(err.Error(), rule.message) {
				t.Errorf("rejection must name %q and say %q; got: %v", rule.field, rule.message, err)
			}
			if err := attempt(false); err != nil {
				t.Errorf("the valid neighbour change was rejected: %v", err)
			}
		})
	}
}
