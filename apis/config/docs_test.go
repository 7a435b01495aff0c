package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/apis/config/v1beta2"
)

// docs/configuration.md has a row for every field of the file.
func TestEveryFieldIsDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range jsonFields(reflect.TypeFor[v1beta2.Configuration]()) {
		if !strings.Contains(string(doc), "| `"+name) {
			t.Errorf("docs/configuration.md has no row for %s", name)
		}
	}
}

// jsonFields are the top-level JSON names of a struct, inlined structs
// included.
func jsonFields(typ reflect.Type) []string {
	var names []string
	for f := range typ.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case f.Name == "TypeMeta":
		case name == "" && f.Anonymous:
			names = append(names, jsonFields(f.Type)...)
		case name != "":
			names = append(names, name)
		}
	}
	return names
}
