// Command release is the build side of shipping sluice (make generate,
// make image, make image-push, make release); the logic is in
// internal/release. It is not part of the sluice binary.
//
//	release chart-sync --repo .            chart templates and values schema from config/
//	release image --out DIR --version V --revision R --created UNIX --binary os/arch=PATH...
//	release push --layout DIR --ref REGISTRY/REPO:TAG
//	release manifests --repo . --image REF@DIGEST --out FILE
//	release chart --repo . --out DIR --version V --digest D
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/release"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: release chart-sync|image|push|manifests|chart [flags]")
		os.Exit(2)
	}
	commands := map[string]func([]string) error{
		"chart-sync": chartSync, "image": image, "push": push, "manifests": manifests, "chart": chart,
	}
	run, ok := commands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "release: unknown command %q\n", os.Args[1])
		os.Exit(2)
	}
	if err := run(os.Args[2:]); err != nil {
		fmt.Fprintf(os.Stderr, "release %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

const chartDir = "charts/sluice"

// chartSync writes the chart's generated templates and its values schema.
func chartSync(args []string) error {
	fs := flag.NewFlagSet("chart-sync", flag.ExitOnError)
	repo := fs.String("repo", ".", "the repository's root")
	_ = fs.Parse(args)
	objs, err := release.Kustomize(filepath.Join(*repo, "config", "default"))
	if err != nil {
		return err
	}
	files, err := release.ChartTemplates(objs)
	if err != nil {
		return err
	}
	dir := filepath.Join(*repo, chartDir, "templates", "generated")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	schema, err := release.ValuesSchema()
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(*repo, chartDir, "values.schema.json"), schema, 0o644)
}

// platformBinaries is --binary os/arch=path, repeated.
type platformBinaries map[release.Platform]string

func (p platformBinaries) String() string { return fmt.Sprint(map[release.Platform]string(p)) }

func (p platformBinaries) Set(s string) error {
	platform, path, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("--binary %q: want os/arch=path", s)
	}
	pl, err := release.ParsePlatform(platform)
	if err != nil {
		return err
	}
	p[pl] = path
	return nil
}

func image(args []string) error {
	binaries := platformBinaries{}
	fs := flag.NewFlagSet("image", flag.ExitOnError)
	out := fs.String("out", "", "the OCI image layout to write")
	version := fs.String("version", "", "the version the binaries carry")
	revision := fs.String("revision", "", "the source commit")
	created := fs.Int64("created", 0, "the image's time, in seconds since 1970 (the commit's, for reproducible digests)")
	fs.Var(binaries, "binary", "os/arch=path of a sluice binary (repeat per platform)")
	_ = fs.Parse(args)
	if *out == "" || *version == "" {
		return errors.New("--out and --version are required")
	}
	index, err := release.BuildImage(release.ImageSpec{Binaries: binaries, Version: *version, Revision: *revision, Created: time.Unix(*created, 0).UTC()})
	if err != nil {
		return err
	}
	digest, err := release.WriteLayout(*out, index, *version)
	if err != nil {
		return err
	}
	if err := os.WriteFile(*out+".digest", []byte(digest.String()+"\n"), 0o644); err != nil {
		return err
	}
	fmt.Printf("image %s (%d platforms) written to %s\n", digest, len(binaries), *out)
	return nil
}

func push(args []string) error {
	fs := flag.NewFlagSet("push", flag.ExitOnError)
	dir := fs.String("layout", "", "the OCI image layout `make image` wrote")
	ref := fs.String("ref", "", "where to push, registry/repository:tag")
	_ = fs.Parse(args)
	index, err := release.ReadLayout(*dir)
	if err != nil {
		return err
	}
	pinned, err := release.Push(*ref, index)
	if err != nil {
		return err
	}
	fmt.Println(pinned)
	return nil
}

// manifests writes the kubectl install: config/default with the image
// pinned.
func manifests(args []string) error {
	fs := flag.NewFlagSet("manifests", flag.ExitOnError)
	repo := fs.String("repo", ".", "the repository's root")
	image := fs.String("image", "", "the manager's image, pinned by digest")
	out := fs.String("out", "", "the manifest file to write")
	_ = fs.Parse(args)
	if !strings.Contains(*image, "@sha256:") {
		return fmt.Errorf("--image %q: a release pins the image by digest (name:tag@sha256:...)", *image)
	}
	data, err := release.ReleaseManifest(filepath.Join(*repo, "config", "default"), *image)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(*out, data, 0o644)
}

// chart copies the chart to out with its version and the image's digest
// set, ready for `helm package`.
func chart(args []string) error {
	fs := flag.NewFlagSet("chart", flag.ExitOnError)
	repo := fs.String("repo", ".", "the repository's root")
	out := fs.String("out", "", "where to write the chart")
	version := fs.String("version", "", "the chart's version and appVersion")
	digest := fs.String("digest", "", "the image's digest (sha256:...)")
	_ = fs.Parse(args)
	src := filepath.Join(*repo, chartDir)
	if err := os.RemoveAll(*out); err != nil {
		return err
	}
	if err := release.CopyDir(src, *out); err != nil {
		return err
	}
	return release.StampChart(*out, *version, *digest)
}
