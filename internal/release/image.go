// Package release builds what sluice ships: its container image (an OCI
// index of one image per platform, made of Go-built binaries and no base
// image) and its release manifests. It runs at build time, from
// hack/release; the manager never imports it, and it talks to no cluster.
package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// NonRootUser is the user and group the image runs as: distroless'
// "nonroot", so that a runAsNonRoot Pod accepts it without a runAsUser.
const NonRootUser = "65532:65532"

// BinaryPath is where the sluice binary is in the image.
const BinaryPath = "/sluice"

// Platform is an image's operating system and architecture.
type Platform struct{ OS, Arch string }

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// ParsePlatform reads "linux/amd64".
func ParsePlatform(s string) (Platform, error) {
	osName, arch, ok := strings.Cut(s, "/")
	if !ok || osName == "" || arch == "" || strings.Contains(arch, "/") {
		return Platform{}, fmt.Errorf("platform %q: want os/arch, such as linux/amd64", s)
	}
	return Platform{OS: osName, Arch: arch}, nil
}

// ImageSpec is what goes into the image.
type ImageSpec struct {
	// Binaries is the sluice binary built for each platform.
	Binaries map[Platform]string
	// Version is stamped in the binaries (`sluice version`) and labels
	// the image.
	Version string
	// Revision is the source commit, for the image's labels.
	Revision string
	// Created is the time every file and the image claim: the commit's,
	// so that the same source builds the same digest.
	Created time.Time
}

// BuildImage assembles the multi-platform image index: per platform, one
// layer with the binary at /sluice, an /etc/passwd naming the non-root
// user and an empty /tmp; no shell, no package manager, nothing else.
func BuildImage(spec ImageSpec) (v1.ImageIndex, error) {
	if len(spec.Binaries) == 0 {
		return nil, fmt.Errorf("no binaries: an image needs at least one platform")
	}
	platforms := make([]Platform, 0, len(spec.Binaries))
	for p := range spec.Binaries {
		platforms = append(platforms, p)
	}
	slices.SortFunc(platforms, func(a, b Platform) int { return strings.Compare(a.String(), b.String()) })

	index := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range platforms {
		img, err := platformImage(p, spec.Binaries[p], spec)
		if err != nil {
			return nil, fmt.Errorf("the %s image: %w", p, err)
		}
		index = mutate.AppendManifests(index, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: p.OS, Architecture: p.Arch}},
		})
	}
	return index, nil
}

func platformImage(p Platform, binary string, spec ImageSpec) (v1.Image, error) {
	exe, err := os.ReadFile(binary)
	if err != nil {
		return nil, fmt.Errorf("reading the binary: %w", err)
	}
	layerTar, err := rootFS(exe, spec.Created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressionLevel(gzip.BestCompression))
	if err != nil {
		return nil, fmt.Errorf("the layer: %w", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	labels := map[string]string{
		"org.opencontainers.image.title":    "sluice",
		"org.opencontainers.image.version":  spec.Version,
		"org.opencontainers.image.revision": spec.Revision,
		"org.opencontainers.image.source":   "https://github.com/sluicehq/sluice",
		"org.opencontainers.image.licenses": "Apache-2.0",
	}
	img, err = mutate.ConfigFile(img, &v1.ConfigFile{
		OS: p.OS, Architecture: p.Arch,
		Created: v1.Time{Time: spec.Created},
		Config: v1.Config{
			Entrypoint: []string{BinaryPath},
			Cmd:        []string{"manager"},
			User:       NonRootUser,
			WorkingDir: "/",
			Labels:     labels,
		},
		RootFS: v1.RootFS{Type: "layers"},
	})
	if err != nil {
		return nil, err
	}
	return mutate.Append(img, mutate.Addendum{
		Layer:   layer,
		History: v1.History{Created: v1.Time{Time: spec.Created}, CreatedBy: "sluice make image", Comment: "the sluice binary"},
	})
}

// rootFS is the layer's tar: every entry owned by root, dated at created,
// in a fixed order.
func rootFS(exe []byte, created time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	passwd := "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	group := "root:x:0:\nnonroot:x:65532:\n"
	entries := []struct {
		name string
		mode int64
		dir  bool
		data []byte
	}{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "home/", mode: 0o755, dir: true},
		{name: "home/nonroot/", mode: 0o700, dir: true},
		{name: strings.TrimPrefix(BinaryPath, "/"), mode: 0o755, data: exe},
		{name: "tmp/", mode: 0o1777, dir: true},
	}
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, ModTime: created, Format: tar.FormatPAX, Typeflag: tar.TypeReg, Size: int64(len(e.data))}
		if e.dir {
			h.Typeflag, h.Size = tar.TypeDir, 0
		}
		if e.name == "home/nonroot/" {
			h.Uid, h.Gid = 65532, 65532
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("the layer's %s: %w", e.name, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, fmt.Errorf("the layer's %s: %w", e.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
