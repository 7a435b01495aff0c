// Package leaderworkerset queues a LeaderWorkerSet group by group: its
// webhook sends the leader and worker templates to the pod integration,
// and each group's Pods (a leader and its workers, named by the group
// index LeaderWorkerSet puts on them) form one pod group that is admitted
// as a unit. Scaling adds groups that queue, or removes groups whose
// quota goes with their Pods. It must not create Workloads itself.
package leaderworkerset

import (
	"context"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
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
	GVK:       lwsapi.SchemeGroupVersion.WithKind("LeaderWorkerSet"),
	NewObject: func() client.Object { return &lwsapi.LeaderWorkerSet{} },
	CRD:       "leaderworkersets.leaderworkerset.x-k8s.io",
	New: func(deps integration.Deps) integration.Setup {
		return integration.SetupFunc(func(mgr ctrl.Manager) error {
			return ctrl.NewWebhookManagedBy(mgr, &lwsapi.LeaderWorkerSet{}).WithDefaulter(&Webhook{Enabled: deps.Enabled}).WithValidator(&Webhook{Enabled: deps.Enabled}).Complete()
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

// Webhook sends a LeaderWorkerSet's Pods to its queue. With the
// leaderworkerset framework disabled it lets everything through.
type Webhook struct {
	Enabled bool
}

// Default puts the queue on the leader and worker templates, with
// serving (a group keeps its quota while LeaderWorkerSet replaces its
// Pods) and fast admission (with startupPolicy LeaderReady the workers
// come only once the leader runs: the group is admitted for its full size
// when its first Pod arrives).
func (w *Webhook) Default(_ context.Context, lws *lwsapi.LeaderWorkerSet) error {
	queue := lws.Labels[kueue.QueueNameLabel]
	if !w.Enabled || queue == "" {
		return nil
	}
	templates := []*corev1.PodTemplateSpec{&lws.Spec.LeaderWorkerTemplate.WorkerTemplate}
	if lws.Spec.LeaderWorkerTemplate.LeaderTemplate != nil {
		templates = append(templates, lws.Spec.LeaderWorkerTemplate.LeaderTemplate)
	}
	for _, tmpl := range templates {
		integration.QueueThroughPods(tmpl, queue, Framework)
		tmpl.Annotations[kueue.PodGroupServingAnno] = "true"
		tmpl.Annotations[kueue.PodGroupFastAdmissionAnno] = "true"
	}
	return nil
}

func (w *Webhook) ValidateCreate(context.Context, *lwsapi.LeaderWorkerSet) (admission.Warnings, error) {
	return nil, nil
}

// ValidateUpdate keeps the queue while Pods may hold quota.
func (w *Webhook) ValidateUpdate(_ context.Context, oldLWS, newLWS *lwsapi.LeaderWorkerSet) (admission.Warnings, error) {
	if !w.Enabled {
		return nil, nil
	}
	return nil, integration.ValidateQueueChange(lwsapi.SchemeGroupVersion.WithKind("LeaderWorkerSet").GroupKind(), newLWS.Name, oldLWS.Labels, newLWS.Labels, oldLWS.Status.Replicas)
}

func (w *Webhook) ValidateDelete(context.Context, *lwsapi.LeaderWorkerSet) (admission.Warnings, error) {
	return nil, nil
}
