package config_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// hack/check-tree.sh (part of make verify) refuses a tracked compiled
// binary and a tracked file over 1 MiB, naming each, and lets testdata and
// the generated CRDs be big.
func TestTreeCheckRefusesBuildOutput(t *testing.T) {
	script, err := os.ReadFile("../hack/check-tree.sh")
	if err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	big := bytes.Repeat([]byte("x"), 1024*1024+1)
	files := map[string][]byte{
		"hack/check-tree.sh":                  script,
		"main.go":                             []byte("package main\n"),
		"sluice":                              append([]byte{0x7f, 'E', 'L', 'F', 2, 1, 1, 0}, make([]byte, 64)...),
		"docs/huge.txt":                       big,
		"test/x/testdata/fixture.yaml":        big,
		"config/crd/bases/workloads.yaml":     big,
		"charts/sluice/templates/generated/c": big,
	}
	for name, data := range files {
		path := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", ".")
	out, err := exec.Command("bash", filepath.Join(repo, "hack/check-tree.sh")).CombinedOutput()
	if err == nil {
		t.Fatalf("the check passed a tree with a binary and a big file:\n%s", out)
	}
	for _, want := range []string{"tracked executable: sluice", "tracked file over 1 MiB: docs/huge.txt"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the check's output lacks %q:\n%s", want, out)
		}
	}
	for _, allowed := range []string{"testdata/fixture.yaml", "crd/bases", "generated/c"} {
		if strings.Contains(string(out), allowed) {
			t.Errorf("the check refused %s, which may be big:\n%s", allowed, out)
		}
	}
	git("rm", "-q", "--cached", "sluice", "docs/huge.txt")
	if out, err := exec.Command("bash", filepath.Join(repo, "hack/check-tree.sh")).CombinedOutput(); err != nil {
		t.Fatalf("the check refused a clean tree: %v\n%s", err, out)
	}
}
