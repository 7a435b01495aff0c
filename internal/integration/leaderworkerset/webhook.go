// Package leaderworkerset queues a LeaderWorkerSet group by group: its
// webhook sends the leader and worker templates to the pod integration,
// and each group's Pods (a leader and its workers, named by the group
// index LeaderWorkerSet puts on them) form one pod group that is admitted
// as a unit. Scaling adds groups that queue, or removes groups whose
// quota goes with their Pods. It must not create Workloads itself.
package leaderworkerset

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	lwsapi "sigs.k8s.io/lws/api/leaderworkerset/v1"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
)

// +kubebuilder:webhook:path=/mutate-leaderworkerset-x-k8s-io-v1-leaderworkerset,mutating=true,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=leaderworkerset.x-k8s.io,resources=leaderworkersets,verbs=create;update,versions=v1,name=mleaderworkerset.kueue.x-k8s.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-leaderworkerset-x-k8s-io-v1-leaderworkerset,mutating=false,failurePolicy=fail,sideEffects=None,timeoutSeconds=10,groups=leaderworkerset.x-k8s.io,resources=leaderworkersets,verbs=create;update,versions=v1,name=vleaderworkerset.kueue.x-k8s.io,admissionReviewVersions=v1
// +kubebuilder:rbac:groups=leaderworkerset.x-k8s.io,resources=leaderworkersets,verbs=get

// Framework is the value of pod-suspending-parent on a LeaderWorkerSet's
// Pods.
const Framework = "leaderworkerset"

// Registration is the LeaderWorkerSet in the list of kinds: queued through
// its Pods, one pod group per group, a known owner for the standalone walk.
var Registration = integration.Registration{
	Framework: configapi.FrameworkLeaderWorkerSet,
	GVK:       gvk,
	NewObject: func() client.Object { return &lwsapi.LeaderWorkerSet{} },
	CRD:       "leaderworkersets.leaderworkerset.x-k8s.io",
	New: func(deps integration.Deps) integration.Setup {
		return integration.SetupFunc(func(mgr ctrl.Manager) error {
			return Webhook(deps.Enabled).Register(mgr, &lwsapi.LeaderWorkerSet{})
		})
	},
	GroupPods:   GroupPods,
	ThroughPods: true,
}

// GroupName is the pod group of a LeaderWorkerSet's group:
// "leaderworkerset-<name>-<group index>", cut and suffixed with a hash when
// that is longer than a label value.
func GroupName(name, index string) string {
	return integration.FitLabelValue("leaderworkerset-"+name+"-"+index, name+"/"+index)
}

// GroupPods puts a queued Pod of a LeaderWorkerSet into its group's pod
// group: the group's name from the LeaderWorkerSet's name and the group
// index LeaderWorkerSet labels it with, the group's size as its total
// count. Pods that are not a LeaderWorkerSet's (no pod-suspending-parent
// of this kind, or no group labels) are left as they are: a Pod missing
// them is still queued, alone.
func GroupPods(p *corev1.Pod) {
	if p.Annotations[kueue.PodSuspendingParentAnno] != Framework {
		return
	}
	name, index := p.Labels[lwsapi.SetNameLabelKey], p.Labels[lwsapi.GroupIndexLabelKey]
	size, err := strconv.Atoi(p.Annotations[lwsapi.SizeAnnotationKey])
	if name == "" || index == "" || err != nil || size < 1 {
		return
	}
	p.Labels[kueue.PodGroupNameLabel] = GroupName(name, index)
	p.Annotations[kueue.PodGroupTotalCountAnno] = strconv.Itoa(size)
}

// Webhook sends a LeaderWorkerSet's Pods to its queue, with serving (a
// group keeps its quota while LeaderWorkerSet replaces its Pods) and fast
// admission (with startupPolicy LeaderReady the workers come only once the
// leader runs: the group is admitted for its full size when its first Pod
// arrives). With the leaderworkerset framework disabled it lets everything
// through.
func Webhook(enabled bool) *integration.ThroughPodsWebhook[*lwsapi.LeaderWorkerSet] {
	return &integration.ThroughPodsWebhook[*lwsapi.LeaderWorkerSet]{Enabled: enabled, GVK: gvk, Parent: Framework,
		Templates: templates,
		Shape: func(_ *lwsapi.LeaderWorkerSet, tmpl *corev1.PodTemplateSpec) {
			tmpl.Annotations[kueue.PodGroupServingAnno] = "true"
			tmpl.Annotations[kueue.PodGroupFastAdmissionAnno] = "true"
		},
		Pods: func(lws *lwsapi.LeaderWorkerSet) int32 { return lws.Status.Replicas }}
}

var gvk = lwsapi.SchemeGroupVersion.WithKind("LeaderWorkerSet")

// templates are the worker template and, when there is one, the leader's.
func templates(lws *lwsapi.LeaderWorkerSet) []*corev1.PodTemplateSpec {
	out := []*corev1.PodTemplateSpec{&lws.Spec.LeaderWorkerTemplate.WorkerTemplate}
	if lws.Spec.LeaderWorkerTemplate.LeaderTemplate != nil {
		out = append(out, lws.Spec.LeaderWorkerTemplate.LeaderTemplate)
	}
	return out
}
