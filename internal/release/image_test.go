package release

import (
	"archive/tar"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

func fakeBinaries(t *testing.T) map[Platform]string {
	t.Helper()
	dir := t.TempDir()
	out := map[Platform]string{}
	for _, p := range []Platform{{"linux", "amd64"}, {"linux", "arm64"}} {
		path := filepath.Join(dir, p.Arch)
		if err := os.WriteFile(path, []byte("binary for "+p.String()), 0o755); err != nil {
			t.Fatal(err)
		}
		out[p] = path
	}
	return out
}

// The image is one index of both platforms, each with the binary as its
// entrypoint, a non-root user, and nothing but the binary, /etc/passwd,
// /etc/group, a home and /tmp: no shell.
func TestBuildImage(t *testing.T) {
	created := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	spec := ImageSpec{Binaries: fakeBinaries(t), Version: "v1.2.3", Revision: "abc", Created: created}
	index, err := BuildImage(spec)
	if err != nil {
		t.Fatal(err)
	}
	m, err := index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for _, d := range m.Manifests {
		platforms = append(platforms, d.Platform.String())
		img, err := index.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Config.User != NonRootUser || !slices.Equal(cfg.Config.Entrypoint, []string{"/sluice"}) ||
			cfg.Config.Labels["org.opencontainers.image.version"] != "v1.2.3" || !cfg.Created.Equal(created) ||
			cfg.Architecture != d.Platform.Architecture {
			t.Errorf("%s: config %+v, created %v", d.Platform, cfg.Config, cfg.Created)
		}
		files := layerFiles(t, img)
		want := []string{"etc/", "etc/group", "etc/passwd", "home/", "home/nonroot/", "sluice", "tmp/"}
		if !slices.Equal(files, want) {
			t.Errorf("%s: the layer holds %v, want %v", d.Platform, files, want)
		}
	}
	if !slices.Equal(platforms, []string{"linux/amd64", "linux/arm64"}) {
		t.Errorf("platforms %v", platforms)
	}

	// The same inputs give the same digest; another time another one.
	again, err := BuildImage(spec)
	if err != nil {
		t.Fatal(err)
	}
	if digest(t, again) != digest(t, index) {
		t.Error("two builds of the same binaries differ")
	}
	spec.Created = created.Add(time.Second)
	later, err := BuildImage(spec)
	if err != nil {
		t.Fatal(err)
	}
	if digest(t, later) == digest(t, index) {
		t.Error("the image does not depend on its time")
	}

	if _, err := BuildImage(ImageSpec{}); err == nil {
		t.Error("an image without binaries was built")
	}
	spec.Binaries = map[Platform]string{{"linux", "amd64"}: filepath.Join(t.TempDir(), "missing")}
	if _, err := BuildImage(spec); err == nil {
		t.Error("an image of a missing binary was built")
	}
}

// A layout written and read back is the same index.
func TestLayoutRoundTrip(t *testing.T) {
	index, err := BuildImage(ImageSpec{Binaries: fakeBinaries(t), Version: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "image")
	written, err := WriteLayout(dir, index, "v1")
	if err != nil {
		t.Fatal(err)
	}
	read, err := ReadLayout(dir)
	if err != nil {
		t.Fatal(err)
	}
	if digest(t, read) != written {
		t.Errorf("read %s, wrote %s", digest(t, read), written)
	}
	if _, err := ReadLayout(t.TempDir()); err == nil {
		t.Error("an empty directory read as an image")
	}
}

func TestParsePlatform(t *testing.T) {
	if p, err := ParsePlatform("linux/arm64"); err != nil || p != (Platform{"linux", "arm64"}) {
		t.Errorf("linux/arm64: %v %v", p, err)
	}
	for _, bad := range []string{"", "linux", "linux/", "/amd64", "linux/arm/v7"} {
		if _, err := ParsePlatform(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func digest(t *testing.T, index v1.ImageIndex) v1.Hash {
	t.Helper()
	d, err := index.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func layerFiles(t *testing.T, img v1.Image) []string {
	t.Helper()
	var names []string
	if err := WalkFiles(img, func(h *tar.Header, _ io.Reader) error {
		names = append(names, h.Name)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return names
}
