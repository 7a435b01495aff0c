package v1beta1

import (
	"net/url"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/sluicehq/sluice/apis/visibility"
)

var (
	// GroupVersion is the API group and version of this package.
	GroupVersion = schema.GroupVersion{Group: "visibility.kueue.x-k8s.io", Version: "v1beta1"}

	// SchemeBuilder registers the types and the query options' decoding.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds this package to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &ClusterQueue{}, &ClusterQueueList{}, &LocalQueue{}, &LocalQueueList{},
		&PendingWorkloadsSummary{}, &PendingWorkloadOptions{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return s.AddConversionFunc((*url.Values)(nil), (*PendingWorkloadOptions)(nil), func(a, b any, _ conversion.Scope) error {
		out := b.(*PendingWorkloadOptions)
		var err error
		out.Offset, out.Limit, err = visibility.OffsetAndLimit(*a.(*url.Values))
		return err
	})
}

// Resource qualifies a resource of this group.
func Resource(resource string) schema.GroupResource {
	return GroupVersion.WithResource(resource).GroupResource()
}
