package visibility

import (
	"net/url"
	"strings"
	"testing"
)

func TestOffsetAndLimit(t *testing.T) {
	for _, tc := range []struct {
		query         string
		offset, limit int64
		err           string
	}{
		{"", 0, DefaultLimit, ""},
		{"limit=0", 0, DefaultLimit, ""},
		{"offset=3&limit=2", 3, 2, ""},
		{"limit=ten", 0, 0, `query parameter limit: "ten" is not an integer`},
		{"offset=1.5", 0, 0, "query parameter offset"},
	} {
		q, _ := url.ParseQuery(tc.query)
		offset, limit, err := OffsetAndLimit(q)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: got %v, want an error with %q", tc.query, err, tc.err)
			}
			continue
		}
		if err != nil || offset != tc.offset || limit != tc.limit {
			t.Errorf("%q: got %d, %d, %v; want %d, %d", tc.query, offset, limit, err, tc.offset, tc.limit)
		}
	}
}

func TestPageBounds(t *testing.T) {
	for _, tc := range []struct{ offset, limit, wantOffset, wantLimit int64 }{
		{-5, -1, 0, 0}, {2, 10, 2, 10}, {0, MaxLimit + 1, 0, MaxLimit}, {1 << 62, 1 << 62, 1 << 62, MaxLimit},
	} {
		if o, l := Page(tc.offset, tc.limit); o != tc.wantOffset || l != tc.wantLimit {
			t.Errorf("Page(%d, %d) = %d, %d; want %d, %d", tc.offset, tc.limit, o, l, tc.wantOffset, tc.wantLimit)
		}
	}
}
