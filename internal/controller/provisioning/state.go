package provisioning

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	autoscaling "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/workload"
)

// maxNameLength bounds the names of requests and templates (a DNS
// subdomain's 253, kept shorter for readability in kubectl).
const maxNameLength = 200

// requestName names the ProvisioningRequest of a workload's check for one
// attempt (retryCount+1): a new attempt is a new request.
func requestName(workloadName, check string, attempt int32) string {
	return limitName(fmt.Sprintf("%s-%s-%d", workloadName, check, attempt))
}

// templateName names the PodTemplate of a request's pod set.
func templateName(request string, podSet kueue.PodSetReference) string {
	return limitName(fmt.Sprintf("ppt-%s-%s", request, podSet))
}

// limitName keeps a name within maxNameLength, replacing its end by a hash
// of the whole so that long names stay distinct.
func limitName(name string) string {
	if len(name) <= maxNameLength {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return name[:maxNameLength-11] + "-" + hex.EncodeToString(sum[:])[:10]
}

// attempt is the attempt a check is at: one more than its retries.
func attempt(state *kueue.AdmissionCheckState) int32 { return ptr.Deref(state.RetryCount, 0) + 1 }

// provisionedPodSets are the pod sets that ask for capacity: those
// requesting a managed resource (all of them when none are listed).
func provisionedPodSets(wl *kueue.Workload, managed []corev1.ResourceName) []kueue.PodSet {
	var out []kueue.PodSet
	for _, ps := range wl.Spec.PodSets {
		requests := workload.PodRequests(&ps.Template.Spec)
		if len(managed) == 0 || slices.ContainsFunc(managed, func(r corev1.ResourceName) bool { _, ok := requests[r]; return ok }) {
			out = append(out, ps)
		}
	}
	return out
}

// requestedPodSet is one entry of a request: a template and how many pods
// of it, and the workload's pod sets it stands for.
type requestedPodSet struct {
	name     kueue.PodSetReference
	template corev1.PodTemplateSpec
	count    int32
	members  []kueue.PodSetReference
}

// requestedPodSets are a request's pod sets: each provisioned pod set with
// its admitted count and the flavors' node labels and tolerations, merged
// per the config's podSetMergePolicy.
func requestedPodSets(wl *kueue.Workload, podSets []kueue.PodSet, flavors map[kueue.ResourceFlavorReference]*kueue.ResourceFlavor,
	policy *kueue.ProvisioningRequestConfigPodSetMergePolicy) []requestedPodSet {
	var out []requestedPodSet
	for _, ps := range podSets {
		tmpl := *ps.Template.DeepCopy()
		count := ps.Count
		for _, psa := range wl.Status.Admission.PodSetAssignments {
			if psa.Name != ps.Name {
				continue
			}
			count = ptr.Deref(psa.Count, count)
			for _, ref := range slices.Sorted(maps.Values(psa.Flavors)) {
				rf := flavors[ref]
				if rf == nil {
					continue
				}
				if len(rf.Spec.NodeLabels) > 0 && tmpl.Spec.NodeSelector == nil {
					tmpl.Spec.NodeSelector = map[string]string{}
				}
				maps.Copy(tmpl.Spec.NodeSelector, rf.Spec.NodeLabels)
				for _, t := range rf.Spec.Tolerations {
					if !slices.ContainsFunc(tmpl.Spec.Tolerations, func(have corev1.Toleration) bool { return equality.Semantic.DeepEqual(have, t) }) {
						tmpl.Spec.Tolerations = append(tmpl.Spec.Tolerations, t)
					}
				}
			}
		}
		merged := false
		for i := range out {
			if policy != nil && mergeable(&out[i].template, &tmpl, *policy) {
				out[i].count += count
				out[i].members = append(out[i].members, ps.Name)
				merged = true
				break
			}
		}
		if !merged {
			out = append(out, requestedPodSet{name: ps.Name, template: tmpl, count: count, members: []kueue.PodSetReference{ps.Name}})
		}
	}
	return out
}

// mergeable tells whether two pod sets can share a template: identical
// templates, or (IdenticalWorkloadSchedulingRequirements) the same
// requests and placement constraints, which is all the autoscaler reads.
func mergeable(a, b *corev1.PodTemplateSpec, policy kueue.ProvisioningRequestConfigPodSetMergePolicy) bool {
	if policy == kueue.IdenticalPodTemplates {
		return equality.Semantic.DeepEqual(a, b)
	}
	return equality.Semantic.DeepEqual(workload.PodRequests(&a.Spec), workload.PodRequests(&b.Spec)) &&
		equality.Semantic.DeepEqual(a.Spec.NodeSelector, b.Spec.NodeSelector) &&
		equality.Semantic.DeepEqual(a.Spec.Tolerations, b.Spec.Tolerations) &&
		equality.Semantic.DeepEqual(a.Spec.Affinity, b.Spec.Affinity) &&
		equality.Semantic.DeepEqual(a.Spec.TopologySpreadConstraints, b.Spec.TopologySpreadConstraints) &&
		a.Spec.PriorityClassName == b.Spec.PriorityClassName
}

// retryStrategy is a config's retry strategy with Kueue's defaults filled.
type retryStrategy struct {
	limit     int32
	base, max time.Duration
}

func retryOf(prc *kueue.ProvisioningRequestConfig) retryStrategy {
	rs := retryStrategy{limit: 3, base: time.Minute, max: 30 * time.Minute}
	if s := prc.Spec.RetryStrategy; s != nil {
		rs.limit = ptr.Deref(s.BackoffLimitCount, rs.limit)
		if s.BackoffBaseSeconds != nil {
			rs.base = time.Duration(*s.BackoffBaseSeconds) * time.Second
		}
		if s.BackoffMaxSeconds != nil {
			rs.max = time.Duration(*s.BackoffMaxSeconds) * time.Second
		}
	}
	return rs
}

// nextState is what a request's conditions make of the check: the new
// state, its message, and for Retry the seconds to wait. admitted tells
// whether the workload already runs (a booking that expires then no
// longer matters; capacity revoked then ends it).
func nextState(pr *autoscaling.ProvisioningRequest, current *kueue.AdmissionCheckState, admitted bool, rs retryStrategy) (kueue.CheckState, string, *int32) {
	cond := func(typ string) (string, bool) {
		c := meta.FindStatusCondition(pr.Status.Conditions, typ)
		if c == nil || c.Status != "True" {
			return "", false
		}
		return c.Message, true
	}
	retryOrReject := func(what, message string) (kueue.CheckState, string, *int32) {
		n := attempt(current)
		if n > rs.limit {
			return kueue.CheckStateRejected, fmt.Sprintf("%s after %d attempts (retryStrategy.backoffLimitCount %d): %s", what, n, rs.limit, message), nil
		}
		wait := int32(workload.Backoff(n, rs.base, rs.max) / time.Second)
		return kueue.CheckStateRetry, fmt.Sprintf("%s, attempt %d of %d; retrying in %ds: %s", what, n, rs.limit+1, wait, message), &wait
	}
	if msg, ok := cond(autoscaling.CapacityRevoked); ok && admitted {
		return kueue.CheckStateRejected, "Capacity revoked: " + msg, nil
	}
	if msg, ok := cond(autoscaling.Failed); ok {
		return retryOrReject("Provisioning failed", msg)
	}
	if msg, ok := cond(autoscaling.BookingExpired); ok && !admitted {
		return retryOrReject("Booking expired before the workload started", msg)
	}
	if msg, ok := cond(autoscaling.Provisioned); ok {
		return kueue.CheckStateReady, "Capacity provisioned: " + msg, nil
	}
	msg := fmt.Sprintf("Waiting for ProvisioningRequest %s", pr.Name)
	if c := meta.FindStatusCondition(pr.Status.Conditions, autoscaling.Provisioned); c != nil && c.Message != "" {
		msg += ": " + c.Message
	} else if c := meta.FindStatusCondition(pr.Status.Conditions, autoscaling.Accepted); c != nil && c.Message != "" {
		msg += ": " + c.Message
	}
	return kueue.CheckStatePending, msg, nil
}

// podSetUpdates are what a provisioned request adds to the pods that
// consume it: the annotations naming the request and its class, and the
// config's node selector entries valued from the class's details.
func podSetUpdates(pr *autoscaling.ProvisioningRequest, requested []requestedPodSet, prc *kueue.ProvisioningRequestConfig) []kueue.PodSetUpdate {
	var selector map[string]string
	if u := prc.Spec.PodSetUpdates; u != nil {
		for _, ns := range u.NodeSelector {
			if v, ok := pr.Status.ProvisioningClassDetails[ns.ValueFromProvisioningClassDetail]; ok {
				if selector == nil {
					selector = map[string]string{}
				}
				selector[ns.Key] = string(v)
			}
		}
	}
	var out []kueue.PodSetUpdate
	for _, r := range requested {
		for _, member := range r.members {
			out = append(out, kueue.PodSetUpdate{Name: member, NodeSelector: maps.Clone(selector), Annotations: map[string]string{
				autoscaling.ProvisioningRequestPodAnnotationKey: pr.Name,
				autoscaling.ProvisioningClassPodAnnotationKey:   pr.Spec.ProvisioningClassName,
			}})
		}
	}
	return out
}
