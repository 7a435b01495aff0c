// Package scheme registers the kueue.x-k8s.io/v1beta2 types together with the
// built-in Kubernetes types, for clients (controller-runtime or client-go
// based) that talk to a cluster running sluice.
package scheme

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

// Scheme holds the built-in types and sluice's API types.
var Scheme = runtime.NewScheme()

func init() {
	utilruntime.Must(AddToScheme(Scheme))
}

// AddToScheme adds the built-in types and sluice's API types to s.
func AddToScheme(s *runtime.Scheme) error {
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return err
	}
	return kueue.AddToScheme(s)
}
