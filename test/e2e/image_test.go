package e2e

import (
	"archive/tar"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/sluicehq/sluice/internal/release"
	"github.com/sluicehq/sluice/test/integration/framework"
)

// The image `make image` produced (bin/image): both platforms, each running
// as a non-root user with the binary as its entrypoint and no shell; the
// amd64 binary taken out of its layer runs `sluice version` and says the
// version the image is labelled with.
func TestImageFromMakeImage(t *testing.T) {
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	index, err := release.ReadLayout(filepath.Join(root, "bin", "image"))
	if err != nil {
		t.Fatalf("%v (run `make image`)", err)
	}
	m, err := index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, d := range m.Manifests {
		seen[d.Platform.String()] = true
		img, err := index.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if user := cfg.Config.User; user == "" || user == "0" || strings.HasPrefix(user, "0:") || strings.HasPrefix(user, "root") {
			t.Errorf("%s runs as %q", d.Platform, user)
		}
		if ep := cfg.Config.Entrypoint; len(ep) != 1 || ep[0] != release.BinaryPath {
			t.Errorf("%s: entrypoint %v, want [%s] (exec form, no shell)", d.Platform, ep, release.BinaryPath)
		}
		files := extract(t, img, filepath.Join(t.TempDir(), d.Platform.Architecture))
		for _, shell := range []string{"bin/sh", "bin/bash", "bin/busybox"} {
			if _, ok := files[shell]; ok {
				t.Errorf("%s has %s", d.Platform, shell)
			}
		}
		if d.Platform.Architecture != runtime.GOARCH || d.Platform.OS != runtime.GOOS {
			continue
		}
		bin, ok := files["sluice"]
		if !ok {
			t.Fatalf("%s: no /sluice in the layer", d.Platform)
		}
		out, err := exec.Command(bin, "version").CombinedOutput()
		if err != nil {
			t.Fatalf("sluice version from the image: %v\n%s", err, out)
		}
		want := "sluice " + cfg.Config.Labels["org.opencontainers.image.version"] + " "
		if !strings.HasPrefix(string(out), want) {
			t.Errorf("sluice version says %q, want it to start with %q", out, want)
		}
	}
	for _, p := range []string{"linux/amd64", "linux/arm64"} {
		if !seen[p] {
			t.Errorf("no %s image in %v", p, seen)
		}
	}
}

// extract writes img's regular files under dir and returns their paths by
// name in the image.
func extract(t *testing.T, img v1.Image, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := release.WalkFiles(img, func(h *tar.Header, content io.Reader) error {
		if h.Typeflag != tar.TypeReg {
			files[strings.TrimSuffix(h.Name, "/")] = ""
			return nil
		}
		path := filepath.Join(dir, filepath.FromSlash(h.Name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, os.FileMode(h.Mode)&0o755)
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := io.Copy(f, content); err != nil { //nolint:gosec // our own image, in a test
			return err
		}
		files[h.Name] = path
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
