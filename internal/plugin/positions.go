package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"k8s.io/client-go/kubernetes"

	"github.com/sluicehq/sluice/apis/visibility"
	visibilityv1beta2 "github.com/sluicehq/sluice/apis/visibility/v1beta2"
)

// positions asks the visibility API where the pending workloads of the
// LocalQueues (namespace/name) stand, by workload (namespace/name). A
// LocalQueue the API does not answer for (not served, not allowed, gone)
// is left out: positions add to a listing, they never fail it.
func (s *session) positions(ctx context.Context, localQueues map[string]bool) map[string]visibilityv1beta2.PendingWorkload {
	out := map[string]visibilityv1beta2.PendingWorkload{}
	cs, err := kubernetes.NewForConfig(s.rest)
	if err != nil {
		return out
	}
	for key := range localQueues {
		namespace, name, ok := splitKey(key)
		if !ok {
			continue
		}
		path := fmt.Sprintf("/apis/%s/namespaces/%s/localqueues/%s/pendingworkloads", visibilityv1beta2.GroupVersion, url.PathEscape(namespace), url.PathEscape(name))
		data, err := cs.CoreV1().RESTClient().Get().AbsPath(path).Param("limit", fmt.Sprint(visibility.MaxLimit)).Do(ctx).Raw()
		if err != nil {
			continue
		}
		var summary visibilityv1beta2.PendingWorkloadsSummary
		if json.Unmarshal(data, &summary) != nil {
			continue
		}
		for _, item := range summary.Items {
			out[item.Namespace+"/"+item.Name] = item
		}
	}
	return out
}

func splitKey(key string) (namespace, name string, ok bool) {
	return strings.Cut(key, "/")
}
