package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the API group and version of every type in this package.
	GroupVersion = schema.GroupVersion{Group: "kueue.x-k8s.io", Version: "v1beta1"}

	// SchemeBuilder registers the types of this package with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this package to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&ClusterQueue{}, &ClusterQueueList{}, &LocalQueue{}, &LocalQueueList{}, &Workload{}, &WorkloadList{},
		&AdmissionCheck{}, &AdmissionCheckList{}, &ResourceFlavor{}, &ResourceFlavorList{}, &Cohort{}, &CohortList{},
		&WorkloadPriorityClass{}, &WorkloadPriorityClassList{}, &Topology{}, &TopologyList{},
		&ProvisioningRequestConfig{}, &ProvisioningRequestConfigList{}, &MultiKueueConfig{}, &MultiKueueConfigList{},
		&MultiKueueCluster{}, &MultiKueueClusterList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
