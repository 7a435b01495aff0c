package api

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// createRule is one CEL or webhook rule checked at creation: build makes a
// valid object and, with broken=true, the same object breaking the rule.
type createRule struct {
	name  string
	build func(broken bool) client.Object
	// field is the path the rejection must name; message a phrase of the rule.
	field, message string
}

func TestInvalidObjectsAreRejected(t *testing.T) {
	rules := []createRule{
		{"flavor topologyName needs nodeLabels", func(broken bool) client.Object {
			rf := validFlavor()
			rf.Spec.TopologyName = ptr.To("dc")
			if broken {
				rf.Spec.NodeLabels = nil
			}
			return rf
		}, "spec.topologyName", "requires at least one nodeLabel"},
		{"flavor taint effect", func(broken bool) client.Object {
			rf := validFlavor()
			if broken {
				rf.Spec.NodeTaints[0].Effect = "NoRun"
			}
			return rf
		}, "spec.nodeTaints", "supported taint effects"},
		{"flavor taint key", func(broken bool) client.Object {
			rf := validFlavor()
			if broken {
				rf.Spec.NodeTaints[0].Key = "not a key!"
			}
			return rf
		}, "spec.nodeTaints[0].key", "name part must consist of"},
		{"flavor toleration Exists takes no value", func(broken bool) client.Object {
			rf := validFlavor()
			if broken {
				rf.Spec.Tolerations[0].Value = "true"
			}
			return rf
		}, "spec.tolerations[0].value", "must be empty when operator is Exists"},
		{"flavor nodeLabel key", func(broken bool) client.Object {
			rf := validFlavor()
			if broken {
				rf.Spec.NodeLabels["bad key"] = "x"
			}
			return rf
		}, "spec.nodeLabels[bad key]", "label key"},
		{"flavor at most 8 nodeLabels", func(broken bool) client.Object {
			rf := validFlavor()
			rf.Spec.NodeLabels = manyNodeLabels(8)
			if broken {
				rf.Spec.NodeLabels = manyNodeLabels(9)
			}
			return rf
		}, "spec.nodeLabels", "must have at most 8"},
		{"cluster queue flavors list the covered resources", func(broken bool) client.Object {
			cq := validClusterQueue()
			if broken {
				cq.Spec.ResourceGroups[0].Flavors[0].Resources = cq.Spec.ResourceGroups[0].Flavors[0].Resources[:1]
			}
			return cq
		}, "spec.resourceGroups[0].flavors", "flavors must list exactly the coveredResources"},
		{"cluster queue limits need a cohort", func(broken bool) client.Object {
			cq := validClusterQueue()
			cq.Spec.ResourceGroups[0].Flavors[0].Resources[0].BorrowingLimit = ptr.To(resource.MustParse("2"))
			if broken {
				cq.Spec.CohortName = ""
			}
			return cq
		}, "spec.resourceGroups", "require a cohortName"},
		{"cluster queue lendingLimit within nominalQuota", func(broken bool) client.Object {
			cq := validClusterQueue()
			cq.Spec.ResourceGroups[0].Flavors[0].Resources[0].LendingLimit = ptr.To(resource.MustParse("10"))
			if broken {
				cq.Spec.ResourceGroups[0].Flavors[0].Resources[0].LendingLimit = ptr.To(resource.MustParse("11"))
			}
			return cq
		}, "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit", "less than or equal to nominalQuota"},
		{"cluster queue nominalQuota not negative", func(broken bool) client.Object {
			cq := validClusterQueue()
			if broken {
				cq.Spec.ResourceGroups[1].Flavors[0].Resources[0].NominalQuota = resource.MustParse("-1")
			}
			return cq
		}, "spec.resourceGroups[1].flavors[0].resources[0].nominalQuota", "greater than or equal to 0"},
		{"cluster queue borrowingLimit not negative", func(broken bool) client.Object {
			cq := validClusterQueue()
			cq.Spec.ResourceGroups[0].Flavors[0].Resources[1].BorrowingLimit = ptr.To(resource.MustParse("0"))
			if broken {
				cq.Spec.ResourceGroups[0].Flavors[0].Resources[1].BorrowingLimit = ptr.To(resource.MustParse("-1Gi"))
			}
			return cq
		}, "spec.resourceGroups[0].flavors[0].resources[1].borrowingLimit", "greater than or equal to 0"},
		{"cluster queue resource in one group only", func(broken bool) client.Object {
			cq := validClusterQueue()
			if broken {
				cq.Spec.ResourceGroups[1].CoveredResources = []corev1.ResourceName{"cpu"}
				cq.Spec.ResourceGroups[1].Flavors[0].Resources[0].Name = "cpu"
			}
			return cq
		}, "spec.resourceGroups[1].coveredResources[0]", "one resource group only"},
		{"cluster queue flavor in one group only", func(broken bool) client.Object {
			cq := validClusterQueue()
			if broken {
				cq.Spec.ResourceGroups[1].Flavors[0].Name = "on-demand"
			}
			return cq
		}, "spec.resourceGroups[1].flavors[0].name", "one resource group only"},
		{"cluster queue at most 256 flavors over groups", func(broken bool) client.Object {
			cq := validClusterQueue()
			cq.Spec.ResourceGroups = groupsWithFlavors(4, 64)
			if broken {
				cq.Spec.ResourceGroups = groupsWithFlavors(5, 64)
			}
			return cq
		}, "spec.resourceGroups", "at most 256 flavors"},
		{"cluster queue preference needs TryNextFlavor", func(broken bool) client.Object {
			cq := validClusterQueue()
			pref := kueue.BorrowingOverPreemption
			cq.Spec.FlavorFungibility = &kueue.FlavorFungibility{WhenCanBorrow: kueue.TryNextFlavor, WhenCanPreempt: kueue.TryNextFlavor, Preference: &pref}
			if broken {
				cq.Spec.FlavorFungibility.WhenCanBorrow = kueue.MayStopSearch
			}
			return cq
		}, "spec.flavorFungibility.preference", "requires whenCanBorrow and whenCanPreempt"},
		{"cluster queue borrowWithinCohort needs reclaim", func(broken bool) client.Object {
			cq := validClusterQueue()
			cq.Spec.Preemption = &kueue.ClusterQueuePreemption{
				ReclaimWithinCohort: kueue.PreemptionPolicyAny,
				BorrowWithinCohort:  &kueue.BorrowWithinCohort{Policy: kueue.BorrowWithinCohortPolicyLowerPriority},
			}
			if broken {
				cq.Spec.Preemption.ReclaimWithinCohort = kueue.PreemptionPolicyNever
			}
			return cq
		}, "spec.preemption.borrowWithinCohort", "forbids a borrowWithinCohort policy"},
		{"cluster queue queueingStrategy enum", func(broken bool) client.Object {
			cq := validClusterQueue()
			cq.Spec.QueueingStrategy = kueue.StrictFIFO
			if broken {
				cq.Spec.QueueingStrategy = "LIFO"
			}
			return cq
		}, "spec.queueingStrategy", "supported values"},
		{"cluster queue namespaceSelector", func(broken bool) client.Object {
			cq := validClusterQueue()
			cq.Spec.NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: metav1.LabelSelectorOpIn, Values: []string{"a"}}}}
			if broken {
				cq.Spec.NamespaceSelector.MatchExpressions[0].Operator = "Within"
			}
			return cq
		}, "spec.namespaceSelector.matchExpressions[0].operator", "not a valid selector operator"},
		{"cluster queue cohortName is a name", func(broken bool) client.Object {
			cq := validClusterQueue()
			if broken {
				cq.Spec.CohortName = "Team_Pool"
			}
			return cq
		}, "spec.cohortName", "RFC 1123"},
		{"cluster queue stopPolicy enum", func(broken bool) client.Object {
			cq := validClusterQueue()
			cq.Spec.StopPolicy = ptr.To(kueue.StopPolicyHoldAndDrain)
			if broken {
				cq.Spec.StopPolicy = ptr.To(kueue.StopPolicy("Pause"))
			}
			return cq
		}, "spec.stopPolicy", "supported values"},
		{"cluster queue fair sharing weight not negative", func(broken bool) client.Object {
			cq := validClusterQueue()
			cq.Spec.FairSharing = &kueue.FairSharing{Weight: ptr.To(resource.MustParse("0"))}
			if broken {
				cq.Spec.FairSharing.Weight = ptr.To(resource.MustParse("-1"))
			}
			return cq
		}, "spec.fairSharing.weight", "greater than or equal to 0"},
		{"local queue clusterQueue is a name", func(broken bool) client.Object {
			lq := validLocalQueue()
			if broken {
				lq.Spec.ClusterQueue = "Team CQ"
			}
			return lq
		}, "spec.clusterQueue", "RFC 1123"},
		{"cohort limits need a parent", func(broken bool) client.Object {
			co := validCohort()
			co.Spec.ParentName = "root"
			co.Spec.ResourceGroups[0].Flavors[0].Resources[0].LendingLimit = ptr.To(resource.MustParse("1"))
			if broken {
				co.Spec.ParentName = ""
			}
			return co
		}, "spec.resourceGroups", "require a parentName"},
		{"cohort resource in one group only", func(broken bool) client.Object {
			co := validCohort()
			co.Spec.ResourceGroups = append(co.Spec.ResourceGroups, kueue.ResourceGroup{
				CoveredResources: []corev1.ResourceName{"memory"},
				Flavors:          []kueue.FlavorQuotas{{Name: "big", Resources: []kueue.ResourceQuota{quota("memory", "1Gi")}}},
			})
			if broken {
				co.Spec.ResourceGroups[1].CoveredResources[0] = "cpu"
				co.Spec.ResourceGroups[1].Flavors[0].Resources[0].Name = "cpu"
			}
			return co
		}, "spec.resourceGroups[1].coveredResources[0]", "one resource group only"},
		{"priority class description at most 2048", func(broken bool) client.Object {
			wpc := validPriorityClass()
			wpc.Description = strings.Repeat("d", 2048)
			if broken {
				wpc.Description += "d"
			}
			return wpc
		}, "description", "2048"},
		{"workload minCount at most count", func(broken bool) client.Object {
			wl := validWorkload()
			wl.Spec.PodSets[0].MinCount = ptr.To[int32](4)
			if broken {
				wl.Spec.PodSets[0].MinCount = ptr.To[int32](5)
			}
			return wl
		}, "spec.podSets[0].minCount", "must not exceed count"},
		{"workload one podSet with minCount", func(broken bool) client.Object {
			wl := validWorkload()
			wl.Spec.PodSets = append(wl.Spec.PodSets, podSet("workers", 2, "1"))
			wl.Spec.PodSets[0].MinCount = ptr.To[int32](1)
			if broken {
				wl.Spec.PodSets[1].MinCount = ptr.To[int32](1)
			}
			return wl
		}, "spec.podSets", "at most one podSet can use minCount"},
		{"workload priority class group and kind pair", func(broken bool) client.Object {
			wl := validWorkload()
			wl.Spec.PriorityClassRef = &kueue.PriorityClassRef{Group: kueue.PodPriorityClassGroup, Kind: kueue.PodPriorityClassKind, Name: "high"}
			wl.Spec.Priority = ptr.To[int32](1000)
			if broken {
				wl.Spec.PriorityClassRef.Kind = kueue.WorkloadPriorityClassKind
			}
			return wl
		}, "spec.priorityClassRef.kind", "group kueue.x-k8s.io goes with kind WorkloadPriorityClass"},
		{"workload priority class must exist to resolve the priority", func(broken bool) client.Object {
			wl := validWorkload()
			wl.Spec.PriorityClassRef = &kueue.PriorityClassRef{Group: kueue.WorkloadPriorityClassGroup, Kind: kueue.WorkloadPriorityClassKind, Name: "no-such-class"}
			wl.Spec.Priority = ptr.To[int32](1000)
			if broken {
				wl.Spec.Priority = nil
			}
			return wl
		}, "spec.priorityClassRef.name", "Not found"},
		{"workload pods resource is reserved", func(broken bool) client.Object {
			wl := validWorkload()
			if broken {
				wl.Spec.PodSets[0].Template.Spec.Containers[0].Resources.Requests["pods"] = resource.MustParse("1")
			}
			return wl
		}, "spec.podSets[0].template.spec.containers[0].resources.requests[pods]", "reserved"},
		{"workload podSet name is a DNS label", func(broken bool) client.Object {
			wl := validWorkload()
			if broken {
				wl.Spec.PodSets[0].Name = "Main"
			}
			return wl
		}, "spec.podSets[0].name", "should match"},
		{"workload maximumExecutionTimeSeconds at least 1", func(broken bool) client.Object {
			wl := validWorkload()
			wl.Spec.MaximumExecutionTimeSeconds = ptr.To[int32](1)
			if broken {
				wl.Spec.MaximumExecutionTimeSeconds = ptr.To[int32](0)
			}
			return wl
		}, "spec.maximumExecutionTimeSeconds", "greater than or equal to 1"},
		{"workload podSet count not negative", func(broken bool) client.Object {
			wl := validWorkload()
			wl.Spec.PodSets[0].Count = 0
			if broken {
				wl.Spec.PodSets[0].Count = -1
			}
			return wl
		}, "spec.podSets[0].count", "greater than or equal to 0"},
	}
	ctx := context.Background()
	for _, rule := range rules {
		t.Run(rule.name, func(t *testing.T) {
			broken := rule.build(true)
			err := cluster.Client.Create(ctx, broken, client.DryRunAll)
			if err == nil {
				t.Fatalf("the broken object was accepted")
			}
			if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) && !apierrors.IsBadRequest(err) {
				t.Errorf("rejected as %v, want an Invalid error", apierrors.ReasonForError(err))
			}
			if !strings.Contains(err.Error(), rule.field) || !strings.Contains(err.Error(), rule.message) {
				t.Errorf("rejection must name %q and say %q; got: %v", rule.field, rule.message, err)
			}
			if err := cluster.Client.Create(ctx, rule.build(false), client.DryRunAll); err != nil {
				t.Errorf("the valid neighbour was rejected: %v", err)
			}
		})
	}
	if len(rules) < 25 {
		t.Errorf("only %d creation rules in the table", len(rules))
	}
}
