package v1beta1

import (
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	"github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// Conversion to and from the hub, v1beta2. What v1beta2 has no place for
// (an AdmissionCheck's retryDelayMinutes) is dropped; what v1beta1 has no
// place for (a ClusterQueue's admissionChecksStrategy with onFlavors) is
// kept in v1beta1's own admissionChecksStrategy.

// ConvertTo converts to v1beta2.
func (src *ClusterQueue) ConvertTo(hub conversion.Hub) error {
	dst := hub.(*v1beta2.ClusterQueue)
	dst.ObjectMeta, dst.Status = *src.ObjectMeta.DeepCopy(), *src.Status.DeepCopy()
	s := src.Spec.DeepCopy()
	dst.Spec = v1beta2.ClusterQueueSpec{
		ResourceGroups: s.ResourceGroups, CohortName: s.Cohort, QueueingStrategy: s.QueueingStrategy,
		NamespaceSelector: s.NamespaceSelector, Preemption: s.Preemption, AdmissionChecksStrategy: s.AdmissionChecksStrategy,
		StopPolicy: s.StopPolicy, FairSharing: s.FairSharing, AdmissionScope: s.AdmissionScope,
	}
	if ff := s.FlavorFungibility; ff != nil {
		dst.Spec.FlavorFungibility = &v1beta2.FlavorFungibility{WhenCanBorrow: policyToV1beta2(ff.WhenCanBorrow),
			WhenCanPreempt: policyToV1beta2(ff.WhenCanPreempt), Preference: ff.Preference}
	}
	if len(s.AdmissionChecks) > 0 {
		strategy := &v1beta2.AdmissionChecksStrategy{}
		for _, name := range s.AdmissionChecks {
			strategy.AdmissionChecks = append(strategy.AdmissionChecks, v1beta2.AdmissionCheckStrategyRule{Name: name})
		}
		dst.Spec.AdmissionChecksStrategy = strategy
	}
	return nil
}

// ConvertFrom converts from v1beta2.
func (dst *ClusterQueue) ConvertFrom(hub conversion.Hub) error {
	src := hub.(*v1beta2.ClusterQueue)
	dst.ObjectMeta, dst.Status = *src.ObjectMeta.DeepCopy(), *src.Status.DeepCopy()
	s := src.Spec.DeepCopy()
	dst.Spec = ClusterQueueSpec{
		ResourceGroups: s.ResourceGroups, Cohort: s.CohortName, QueueingStrategy: s.QueueingStrategy,
		NamespaceSelector: s.NamespaceSelector, Preemption: s.Preemption, AdmissionChecksStrategy: s.AdmissionChecksStrategy,
		StopPolicy: s.StopPolicy, FairSharing: s.FairSharing, AdmissionScope: s.AdmissionScope,
	}
	if ff := s.FlavorFungibility; ff != nil {
		dst.Spec.FlavorFungibility = &FlavorFungibility{WhenCanBorrow: FlavorFungibilityPolicy(ff.WhenCanBorrow),
			WhenCanPreempt: FlavorFungibilityPolicy(ff.WhenCanPreempt), Preference: ff.Preference}
	}
	return nil
}

// policyToV1beta2 maps v1beta1's Borrow and Preempt to MayStopSearch.
func policyToV1beta2(p FlavorFungibilityPolicy) v1beta2.FlavorFungibilityPolicy {
	if p == Borrow || p == Preempt {
		return v1beta2.MayStopSearch
	}
	return v1beta2.FlavorFungibilityPolicy(p)
}

// ConvertTo converts to v1beta2.
func (src *LocalQueue) ConvertTo(hub conversion.Hub) error {
	dst := hub.(*v1beta2.LocalQueue)
	dst.ObjectMeta, dst.Spec = *src.ObjectMeta.DeepCopy(), *src.Spec.DeepCopy()
	s := src.Status.DeepCopy()
	dst.Status = v1beta2.LocalQueueStatus{Conditions: s.Conditions, PendingWorkloads: s.PendingWorkloads, ReservingWorkloads: s.ReservingWorkloads,
		AdmittedWorkloads: s.AdmittedWorkloads, FlavorsReservation: s.FlavorsReservation, FlavorsUsage: s.FlavorUsage, FairSharing: s.FairSharing}
	return nil
}

// ConvertFrom converts from v1beta2.
func (dst *LocalQueue) ConvertFrom(hub conversion.Hub) error {
	src := hub.(*v1beta2.LocalQueue)
	dst.ObjectMeta, dst.Spec = *src.ObjectMeta.DeepCopy(), *src.Spec.DeepCopy()
	s := src.Status.DeepCopy()
	dst.Status = LocalQueueStatus{Conditions: s.Conditions, PendingWorkloads: s.PendingWorkloads, ReservingWorkloads: s.ReservingWorkloads,
		AdmittedWorkloads: s.AdmittedWorkloads, FlavorsReservation: s.FlavorsReservation, FlavorUsage: s.FlavorsUsage, FairSharing: s.FairSharing}
	return nil
}

// ConvertTo converts to v1beta2.
func (src *Workload) ConvertTo(hub conversion.Hub) error {
	dst := hub.(*v1beta2.Workload)
	dst.ObjectMeta = *src.ObjectMeta.DeepCopy()
	s, st := src.Spec.DeepCopy(), src.Status.DeepCopy()
	dst.Spec = v1beta2.WorkloadSpec{PodSets: s.PodSets, QueueName: s.QueueName, Priority: s.Priority, Active: s.Active,
		MaximumExecutionTimeSeconds: s.MaximumExecutionTimeSeconds, PreemptionGates: s.PreemptionGates}
	switch s.PriorityClassSource {
	case WorkloadPriorityClassSource:
		dst.Spec.PriorityClassRef = &v1beta2.PriorityClassRef{Group: v1beta2.WorkloadPriorityClassGroup, Kind: v1beta2.WorkloadPriorityClassKind, Name: s.PriorityClassName}
	case PodPriorityClassSource:
		dst.Spec.PriorityClassRef = &v1beta2.PriorityClassRef{Group: v1beta2.PodPriorityClassGroup, Kind: v1beta2.PodPriorityClassKind, Name: s.PriorityClassName}
	}
	dst.Status = v1beta2.WorkloadStatus{Conditions: st.Conditions, Admission: st.Admission, RequeueState: st.RequeueState,
		ReclaimablePods: st.ReclaimablePods, AdmissionChecks: st.AdmissionChecks, ResourceRequests: st.ResourceRequests,
		AccumulatedPastExecutionTimeSeconds: st.AccumulatedPastExexcutionTimeSeconds, NominatedClusterNames: st.NominatedClusterNames,
		ClusterName: st.ClusterName}
	return nil
}

// ConvertFrom converts from v1beta2.
func (dst *Workload) ConvertFrom(hub conversion.Hub) error {
	src := hub.(*v1beta2.Workload)
	dst.ObjectMeta = *src.ObjectMeta.DeepCopy()
	s, st := src.Spec.DeepCopy(), src.Status.DeepCopy()
	dst.Spec = WorkloadSpec{PodSets: s.PodSets, QueueName: s.QueueName, Priority: s.Priority, Active: s.Active,
		MaximumExecutionTimeSeconds: s.MaximumExecutionTimeSeconds, PreemptionGates: s.PreemptionGates}
	if ref := s.PriorityClassRef; ref != nil {
		dst.Spec.PriorityClassName = ref.Name
		switch {
		case ref.Group == v1beta2.WorkloadPriorityClassGroup && ref.Kind == v1beta2.WorkloadPriorityClassKind:
			dst.Spec.PriorityClassSource = WorkloadPriorityClassSource
		case ref.Group == v1beta2.PodPriorityClassGroup && ref.Kind == v1beta2.PodPriorityClassKind:
			dst.Spec.PriorityClassSource = PodPriorityClassSource
		}
	}
	dst.Status = WorkloadStatus{Conditions: st.Conditions, Admission: st.Admission, RequeueState: st.RequeueState,
		ReclaimablePods: st.ReclaimablePods, AdmissionChecks: st.AdmissionChecks, ResourceRequests: st.ResourceRequests,
		AccumulatedPastExexcutionTimeSeconds: st.AccumulatedPastExecutionTimeSeconds, NominatedClusterNames: st.NominatedClusterNames,
		ClusterName: st.ClusterName}
	return nil
}

// ConvertTo converts to v1beta2 (retryDelayMinutes has no place there).
func (src *AdmissionCheck) ConvertTo(hub conversion.Hub) error {
	dst := hub.(*v1beta2.AdmissionCheck)
	dst.ObjectMeta, dst.Status = *src.ObjectMeta.DeepCopy(), *src.Status.DeepCopy()
	dst.Spec = v1beta2.AdmissionCheckSpec{ControllerName: src.Spec.ControllerName, Parameters: src.Spec.Parameters.DeepCopy()}
	return nil
}

// ConvertFrom converts from v1beta2.
func (dst *AdmissionCheck) ConvertFrom(hub conversion.Hub) error {
	src := hub.(*v1beta2.AdmissionCheck)
	dst.ObjectMeta, dst.Status = *src.ObjectMeta.DeepCopy(), *src.Status.DeepCopy()
	dst.Spec = AdmissionCheckSpec{ControllerName: src.Spec.ControllerName, Parameters: src.Spec.Parameters.DeepCopy()}
	return nil
}

// ConvertTo converts to v1beta2.
func (src *MultiKueueCluster) ConvertTo(hub conversion.Hub) error {
	dst := hub.(*v1beta2.MultiKueueCluster)
	dst.ObjectMeta, dst.Status = *src.ObjectMeta.DeepCopy(), *src.Status.DeepCopy()
	dst.Spec = v1beta2.MultiKueueClusterSpec{ClusterSource: v1beta2.ClusterSource{
		KubeConfig: src.Spec.KubeConfig.DeepCopy(), ClusterProfileRef: src.Spec.ClusterProfileRef.DeepCopy()}}
	return nil
}

// ConvertFrom converts from v1beta2.
func (dst *MultiKueueCluster) ConvertFrom(hub conversion.Hub) error {
	src := hub.(*v1beta2.MultiKueueCluster)
	dst.ObjectMeta, dst.Status = *src.ObjectMeta.DeepCopy(), *src.Status.DeepCopy()
	dst.Spec = MultiKueueClusterSpec{KubeConfig: src.Spec.ClusterSource.KubeConfig.DeepCopy(), ClusterProfileRef: src.Spec.ClusterSource.ClusterProfileRef.DeepCopy()}
	return nil
}

// The kinds of the same shape in both versions.

// ConvertTo converts to v1beta2.
func (src *ResourceFlavor) ConvertTo(hub conversion.Hub) error {
	dst := hub.(*v1beta2.ResourceFlavor)
	dst.ObjectMeta, dst.Spec = *src.ObjectMeta.DeepCopy(), *src.Spec.DeepCopy()
	return nil
}

// ConvertFrom converts from v1beta2.
func (dst *ResourceFlavor) ConvertFrom(hub conversion.Hub) error {
	src := hub.(*v1beta2.ResourceFlavor)
	dst.ObjectMeta, dst.Spec = *src.ObjectMeta.DeepCopy(), *src.Spec.DeepCopy()
	return nil
}

// ConvertTo converts to v1beta2.
func (src *Cohort) ConvertTo(hub conversion.Hub) error {
	dst := hub.(*v1beta2.Cohort)
	dst.ObjectMeta, dst.Spec, dst.Status = *src.ObjectMeta.DeepCopy(), *src.Spec.DeepCopy(), *src.Status.DeepCopy()
	return nil
}

// ConvertFrom converts from v1beta2.
func (dst *Cohort) ConvertFrom(hub conversion.Hub) error {
	src := hub.(*v1beta2.Cohort)
	dst.ObjectMeta, dst.Spec, dst.Status = *src.ObjectMeta.DeepCopy(), *src.Spec.DeepCopy(), *src.Status.DeepCopy()
	return nil
}

// ConvertTo converts to v1beta2.
func (src *WorkloadPriorityClass) ConvertTo(hub conversion.Hub) error {
	dst := hub.(*v1beta2.WorkloadPriorityClass)
	dst.ObjectMeta, dst.Value, dst.Description = *src.ObjectMeta.DeepCopy(), src.Value, src.Description
	return nil
}

// ConvertFrom converts from v1beta2.
func (dst *WorkloadPriorityClass) ConvertFrom(hub conversion.Hub) error {
	src := hub.(*v1beta2.WorkloadPriorityClass)
	dst.ObjectMeta, dst.Value, dst.Description = *src.ObjectMeta.DeepCopy(), src.Value, src.Description
	return nil
}

// ConvertTo converts to v1beta2.
func (src *Topology) ConvertTo(hub conversion.Hub) error {
	dst := hub.(*v1beta2.Topology)
	dst.ObjectMeta, dst.Spec = *src.ObjectMeta.DeepCopy(), *src.Spec.DeepCopy()
	return nil
}

// ConvertFrom converts from v1beta2.
func (dst *Topology) ConvertFrom(hub conversion.Hub) error {
	src := hub.(*v1beta2.Topology)
	dst.ObjectMeta, dst.Spec = *src.ObjectMeta.DeepCopy(), *src.Spec.DeepCopy()
	return nil
}

// ConvertTo converts to v1beta2.
func (src *ProvisioningRequestConfig) ConvertTo(hub conversion.Hub) error {
	dst := hub.(*v1beta2.ProvisioningRequestConfig)
	dst.ObjectMeta, dst.Spec = *src.ObjectMeta.DeepCopy(), *src.Spec.DeepCopy()
	return nil
}

// ConvertFrom converts from v1beta2.
func (dst *ProvisioningRequestConfig) ConvertFrom(hub conversion.Hub) error {
	src := hub.(*v1beta2.ProvisioningRequestConfig)
	dst.ObjectMeta, dst.Spec = *src.ObjectMeta.DeepCopy(), *src.Spec.DeepCopy()
	return nil
}

// ConvertTo converts to v1beta2.
func (src *MultiKueueConfig) ConvertTo(hub conversion.Hub) error {
	dst := hub.(*v1beta2.MultiKueueConfig)
	dst.ObjectMeta, dst.Spec = *src.ObjectMeta.DeepCopy(), *src.Spec.DeepCopy()
	return nil
}

// ConvertFrom converts from v1beta2.
func (dst *MultiKueueConfig) ConvertFrom(hub conversion.Hub) error {
	src := hub.(*v1beta2.MultiKueueConfig)
	dst.ObjectMeta, dst.Spec = *src.ObjectMeta.DeepCopy(), *src.Spec.DeepCopy()
	return nil
}
