package release

import (
	"io"
	"log"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// make image-push: the index lands in a registry (go-containerregistry's
// in-memory one, on loopback) under the tag, and Push returns the
// reference pinned by the same digest.
func TestPushToARegistry(t *testing.T) {
	server := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(server.Close)
	u, err := url.Parse(server.URL)
	if err != nil {
		t.Fatal(err)
	}
	index, err := BuildImage(ImageSpec{Binaries: fakeBinaries(t), Version: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	pinned, err := Push(u.Host+"/platform/sluice:v1", index)
	if err != nil {
		t.Fatal(err)
	}
	if want := u.Host + "/platform/sluice@" + digest(t, index).String(); pinned != want {
		t.Errorf("pinned %s, want %s", pinned, want)
	}
	ref, err := name.ParseReference(u.Host + "/platform/sluice:v1")
	if err != nil {
		t.Fatal(err)
	}
	pulled, err := remote.Index(ref)
	if err != nil {
		t.Fatal(err)
	}
	if digest(t, pulled) != digest(t, index) {
		t.Errorf("the registry holds %s, pushed %s", digest(t, pulled), digest(t, index))
	}
	if _, err := Push("not a reference", index); err == nil || !strings.Contains(err.Error(), "image reference") {
		t.Errorf("a malformed reference: %v", err)
	}
}
