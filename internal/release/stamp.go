package release

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

var digestPattern = regexp.MustCompile(`^sha256:[a-f0-9]{64}$`)

// StampChart sets a copied chart's version and appVersion, and pins its
// image to digest. Lines are replaced in place so that the values file
// keeps its comments; each must be found exactly once.
func StampChart(dir, version, digest string) error {
	if version == "" || strings.ContainsAny(version, " \n\"") {
		return fmt.Errorf("chart version %q: want a version such as v0.1.0", version)
	}
	if !digestPattern.MatchString(digest) {
		return fmt.Errorf("image digest %q: want sha256: and 64 hex digits", digest)
	}
	chartVersion := ChartVersion(version)
	if err := replaceLines(filepath.Join(dir, "Chart.yaml"), map[string]string{
		"version: 0.0.0-dev": "version: " + chartVersion,
		"appVersion: dev":    fmt.Sprintf("appVersion: %q", version),
	}); err != nil {
		return err
	}
	return replaceLines(filepath.Join(dir, "values.yaml"), map[string]string{
		`  digest: ""`: fmt.Sprintf("  digest: %q", digest),
	})
}

// semver is what Helm accepts as a chart's version.
var semver = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

// ChartVersion is the chart's (semantic) version for sluice's version: a
// tag's without its v; an untagged build (git describe: a commit, maybe
// -dirty) is a pre-release of 0.0.0.
func ChartVersion(version string) string {
	if v := strings.TrimPrefix(version, "v"); semver.MatchString(v) {
		return v
	}
	return "0.0.0-" + strings.Map(func(r rune) rune {
		if r == '.' || r == '-' || ('0' <= r && r <= '9') || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') {
			return r
		}
		return '-'
	}, version)
}

func replaceLines(path string, lines map[string]string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	text := string(data)
	for old, repl := range lines {
		if n := strings.Count(text, old+"\n"); n != 1 {
			return fmt.Errorf("%s: found the line %q %d times, want once", path, old, n)
		}
		text = strings.Replace(text, old+"\n", repl+"\n", 1)
	}
	return os.WriteFile(path, []byte(text), 0o644)
}

// CopyDir copies the tree at src to dst (a chart, before StampChart).
func CopyDir(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}
