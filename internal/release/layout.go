package release

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// WriteLayout replaces dir with an OCI image layout holding index, tagged
// with version: what `crane push`, `skopeo copy oci:` or a registry
// mirror take as they are.
func WriteLayout(dir string, index v1.ImageIndex, version string) (v1.Hash, error) {
	if err := os.RemoveAll(dir); err != nil {
		return v1.Hash{}, fmt.Errorf("clearing %s: %w", dir, err)
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("an image layout at %s: %w", dir, err)
	}
	if err := p.AppendIndex(index, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": version})); err != nil {
		return v1.Hash{}, fmt.Errorf("writing the image to %s: %w", dir, err)
	}
	return index.Digest()
}

// ReadLayout is the image index WriteLayout wrote to dir.
func ReadLayout(dir string) (v1.ImageIndex, error) {
	root, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the image layout %s: %w", dir, err)
	}
	m, err := root.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("reading the image layout %s: %w", dir, err)
	}
	if len(m.Manifests) != 1 {
		return nil, fmt.Errorf("the image layout %s holds %d images, want 1", dir, len(m.Manifests))
	}
	return root.ImageIndex(m.Manifests[0].Digest)
}

// Push sends index to reference (registry/repository:tag) with the
// credentials of the local Docker configuration, and returns the pinned
// reference, by digest.
func Push(reference string, index v1.ImageIndex) (string, error) {
	ref, err := name.ParseReference(reference)
	if err != nil {
		return "", fmt.Errorf("image reference %q: %w", reference, err)
	}
	if err := remote.WriteIndex(ref, index, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return "", fmt.Errorf("pushing %s: %w", ref, err)
	}
	digest, err := index.Digest()
	if err != nil {
		return "", err
	}
	return ref.Context().Digest(digest.String()).String(), nil
}

// WalkFiles calls fn for every entry of img's layers, in order, with the
// entry's content.
func WalkFiles(img v1.Image, fn func(h *tar.Header, content io.Reader) error) error {
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	for _, l := range layers {
		if err := walkLayer(l, fn); err != nil {
			return err
		}
	}
	return nil
}

func walkLayer(l v1.Layer, fn func(h *tar.Header, content io.Reader) error) error {
	rc, err := l.Uncompressed()
	if err != nil {
		return err
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(h, tr); err != nil {
			return err
		}
	}
}
