// Package visibility holds what the versions of visibility.kueue.x-k8s.io
// share: the query parameters of a pendingworkloads request and their
// bounds. The types are in v1beta1 and v1beta2.
package visibility

import (
	"fmt"
	"net/url"
	"strconv"
)

const (
	// DefaultLimit is the page size when a query sets none (or 0).
	DefaultLimit = 1000
	// MaxLimit bounds a page: a larger limit is cut to it.
	MaxLimit = 100_000
)

// OffsetAndLimit reads offset and limit from a request's query: absent,
// offset is 0 and limit DefaultLimit. A value that is not an integer is an
// error naming the parameter.
func OffsetAndLimit(q url.Values) (offset, limit int64, err error) {
	limit = DefaultLimit
	for name, dst := range map[string]*int64{"offset": &offset, "limit": &limit} {
		v := q.Get(name)
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("query parameter %s: %q is not an integer", name, v)
		}
		*dst = n
	}
	if limit == 0 {
		limit = DefaultLimit
	}
	return offset, limit, nil
}

// Page bounds a requested page: negative values count as 0, and a limit
// above MaxLimit as MaxLimit.
func Page(offset, limit int64) (int64, int64) {
	return max(offset, 0), min(max(limit, 0), MaxLimit)
}
