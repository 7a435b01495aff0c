// Package appwrapper is CodeFlare's AppWrapper
// (workload.codeflare.dev/v1beta2) in the job framework: the pod sets its
// components declare (or that the AppWrapper project's own inference finds
// for the kinds it knows), suspended and resumed through spec.suspend,
// admission given to the AppWrapper controller as each component's
// podSetInfos, which it injects into the objects it creates. Its
// components are its children whatever their kind, but only those it
// makes, as large as its Workload counts them (makes.go). It must not own
// the Workload lifecycle (internal/integration does).
package appwrapper

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	awv1beta2 "github.com/project-codeflare/appwrapper/api/v1beta2"
	awutils "github.com/project-codeflare/appwrapper/pkg/utils"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/validation"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/internal/integration"
)

// +kubebuilder:rbac:groups=workload.codeflare.dev,resources=appwrappers,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=workload.codeflare.dev,resources=appwrappers/status,verbs=get

// Kind is the AppWrapper in the job framework.
var Kind = integration.Kind{
	Framework:         configapi.FrameworkAppWrapper,
	GVK:               awv1beta2.GroupVersion.WithKind(awv1beta2.AppWrapperKind),
	NewObject:         func() client.Object { return &awv1beta2.AppWrapper{} },
	NewList:           func() client.ObjectList { return &awv1beta2.AppWrapperList{} },
	Wrap:              func(o client.Object) integration.Job { return &AppWrapper{o.(*awv1beta2.AppWrapper)} },
	ChildrenOfAnyKind: true,
	Makes:             makes,
}

// Registration is the AppWrapper in the list of kinds.
var Registration = integration.JobRegistration(&Kind, "appwrappers.workload.codeflare.dev", func(deps integration.Deps) func(ctrl.Manager) error {
	return newWebhook(deps).Register
})

// AppWrapper adapts an AppWrapper to the framework.
type AppWrapper struct{ *awv1beta2.AppWrapper }

var _ integration.ReadyCounter = (*AppWrapper)(nil)

func (a *AppWrapper) Object() client.Object { return a.AppWrapper }

func (a *AppWrapper) IsSuspended() bool { return a.Spec.Suspend }

func (a *AppWrapper) Suspend() { a.Spec.Suspend = true }

// fromSpec is a copy of the AppWrapper whose pod sets the AppWrapper
// project's helpers read from its spec alone: they prefer the status's
// copy (the AppWrapper controller's), which could predate a spec sluice
// would then not be counting.
func fromSpec(aw *awv1beta2.AppWrapper) *awv1beta2.AppWrapper {
	c := aw.DeepCopy()
	c.Status.ComponentStatus = nil
	return c
}

// componentPodSets are the AppWrapper's pod sets as the AppWrapper project
// reads them (declared, else inferred for the kinds it knows), each with
// its template. A declared pod set whose path leads to no pod template is
// an error: its pods would not be counted.
func componentPodSets(aw *awv1beta2.AppWrapper) ([]awv1beta2.AppWrapperPodSet, []kueue.PodSet, error) {
	c := fromSpec(aw)
	templates, awPodSets, err := awutils.GetComponentPodSpecs(c)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the pod sets of AppWrapper %s: %w", aw.Name, err)
	}
	want := 0
	for _, cs := range c.Status.ComponentStatus {
		want += len(cs.PodSets)
	}
	if len(templates) != want {
		return nil, nil, fmt.Errorf("AppWrapper %s: %d of its %d pod sets lead to no pod template", aw.Name, want-len(templates), want)
	}
	podSets := make([]kueue.PodSet, len(templates))
	for i := range templates {
		podSets[i] = kueue.PodSet{Name: podSetName(aw.Name, i), Count: awutils.Replicas(awPodSets[i]), Template: *templates[i]}
	}
	return awPodSets, podSets, nil
}

// podSetName is the i-th pod set's name: "<appwrapper>-<i>", as Kueue names
// them, made a DNS label (lower case, dots as dashes, cut to fit with 5
// hex characters of a hash of the name).
func podSetName(name string, i int) kueue.PodSetReference {
	suffix := "-" + strconv.Itoa(i)
	base := strings.ReplaceAll(strings.ToLower(name), ".", "-")
	if room := validation.DNS1123LabelMaxLength - len(suffix); len(base) > room {
		sum := sha256.Sum256([]byte(name))
		base = base[:room-6] + "-" + hex.EncodeToString(sum[:])[:5]
	}
	return kueue.PodSetReference(base + suffix)
}

func (a *AppWrapper) PodSets() ([]kueue.PodSet, error) {
	_, podSets, err := componentPodSets(a.AppWrapper)
	return podSets, err
}

// Originals: what Run changes is the components' podSetInfos alone, which
// Restore clears; nothing per pod set to remember (an empty list, not nil:
// the AppWrapper is restored, not deleted).
func (a *AppWrapper) Originals() []integration.PodSetInfo { return []integration.PodSetInfo{} }

// Run gives admission to the AppWrapper controller as the components'
// podSetInfos, in pod-set order, and unsuspends.
func (a *AppWrapper) Run(infos []integration.PodSetInfo) error {
	awInfos := make([]awv1beta2.AppWrapperPodSetInfo, len(infos))
	for i, info := range infos {
		awInfos[i] = awv1beta2.AppWrapperPodSetInfo{Labels: info.Labels, Annotations: info.Annotations,
			NodeSelector: info.NodeSelector, Tolerations: info.Tolerations}
	}
	c := fromSpec(a.AppWrapper)
	if err := awutils.SetPodSetInfos(c, awInfos); err != nil {
		return fmt.Errorf("AppWrapper %s: %w", a.Name, err)
	}
	for i := range a.Spec.Components {
		a.Spec.Components[i].PodSetInfos = c.Spec.Components[i].PodSetInfos
	}
	a.Spec.Suspend = false
	return nil
}

// Restore clears the components' podSetInfos.
func (a *AppWrapper) Restore([]integration.PodSetInfo) bool {
	changed := false
	for i := range a.Spec.Components {
		changed = changed || a.Spec.Components[i].PodSetInfos != nil
	}
	awutils.ClearPodSetInfos(a.AppWrapper)
	return changed
}

// Finished reads the AppWrapper's phase. A failed AppWrapper whose
// resources are still deployed has not finished: its pods may still run.
func (a *AppWrapper) Finished() (bool, bool, string) {
	switch a.Status.Phase {
	case awv1beta2.AppWrapperSucceeded:
		return true, true, "AppWrapper finished successfully"
	case awv1beta2.AppWrapperFailed:
		if !meta.IsStatusConditionTrue(a.Status.Conditions, string(awv1beta2.ResourcesDeployed)) {
			return true, false, "AppWrapper failed"
		}
	}
	return false, false, ""
}

// Active: the AppWrapper controller still holds resources for it, or is on
// its way to or from running.
func (a *AppWrapper) Active() bool {
	switch a.Status.Phase {
	case awv1beta2.AppWrapperResuming, awv1beta2.AppWrapperRunning, awv1beta2.AppWrapperSuspending, awv1beta2.AppWrapperResetting:
		return true
	}
	return meta.IsStatusConditionTrue(a.Status.Conditions, string(awv1beta2.QuotaReserved)) ||
		meta.IsStatusConditionTrue(a.Status.Conditions, string(awv1beta2.ResourcesDeployed))
}

func (a *AppWrapper) ReclaimablePods() []kueue.ReclaimablePod { return nil }

// ReadyPods: the AppWrapper controller tells whether all its pods are
// ready (PodsReady), not how many are.
func (a *AppWrapper) ReadyPods() int32 {
	if !meta.IsStatusConditionTrue(a.Status.Conditions, string(awv1beta2.PodsReady)) {
		return 0
	}
	podSets, err := a.PodSets()
	if err != nil {
		return 0
	}
	var total int32
	for _, ps := range podSets {
		total += ps.Count
	}
	return total
}

// ManagedElsewhere names a controller other than the AppWrapper controller
// (MultiKueue's is sluice's own, and dispatches no AppWrapper yet: the
// MultiKueue check rejects its Workload).
func (a *AppWrapper) ManagedElsewhere() string {
	by := ""
	if a.Spec.ManagedBy != nil {
		by = *a.Spec.ManagedBy
	}
	if by == "" || by == awv1beta2.AppWrapperControllerName || by == kueue.MultiKueueControllerName {
		return ""
	}
	return by
}
