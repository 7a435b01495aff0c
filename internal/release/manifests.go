package release

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// ManagerContainer is the container of the manager's Deployment whose image
// a release pins.
const ManagerContainer = "manager"

// Kustomize renders the kustomization in dir, as `kubectl kustomize` does,
// in the order kubectl can apply in one pass: namespaces and CRDs first,
// webhook configurations last.
func Kustomize(dir string) ([]*unstructured.Unstructured, error) {
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionLegacy
	resMap, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize %s: %w", dir, err)
	}
	out, err := resMap.AsYaml()
	if err != nil {
		return nil, fmt.Errorf("kustomize %s: %w", dir, err)
	}
	return DecodeObjects(out)
}

// DecodeObjects reads a stream of YAML (or JSON) documents.
func DecodeObjects(data []byte) ([]*unstructured.Unstructured, error) {
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		if err := decoder.Decode(&obj.Object); errors.Is(err, io.EOF) {
			return objs, nil
		} else if err != nil {
			return nil, fmt.Errorf("reading object %d: %w", len(objs)+1, err)
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
}

// EncodeObjects writes objects as one YAML stream.
func EncodeObjects(objs []*unstructured.Unstructured) ([]byte, error) {
	var buf bytes.Buffer
	for i, obj := range objs {
		data, err := yaml.Marshal(obj.Object)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(data)
	}
	return buf.Bytes(), nil
}

// PinImage sets the manager container's image in the install's one
// Deployment to image (a reference by digest, for a release).
func PinImage(objs []*unstructured.Unstructured, image string) error {
	pinned := 0
	for _, obj := range objs {
		if obj.GetKind() != "Deployment" {
			continue
		}
		containers, _, err := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
		if err != nil {
			return fmt.Errorf("deployment %s: %w", obj.GetName(), err)
		}
		for i, c := range containers {
			container, ok := c.(map[string]any)
			if !ok || container["name"] != ManagerContainer {
				continue
			}
			container["image"] = image
			containers[i] = container
			pinned++
		}
		if err := unstructured.SetNestedSlice(obj.Object, containers, "spec", "template", "spec", "containers"); err != nil {
			return fmt.Errorf("deployment %s: %w", obj.GetName(), err)
		}
	}
	if pinned != 1 {
		return fmt.Errorf("found %d containers named %q in the install's Deployments, want 1", pinned, ManagerContainer)
	}
	return nil
}

// ReleaseManifest is the kubectl install of a release: the kustomization
// in dir rendered, with the manager's image pinned.
func ReleaseManifest(dir, image string) ([]byte, error) {
	objs, err := Kustomize(dir)
	if err != nil {
		return nil, err
	}
	if err := PinImage(objs, image); err != nil {
		return nil, err
	}
	data, err := EncodeObjects(objs)
	if err != nil {
		return nil, err
	}
	header := "# sluice " + image + "\n# kubectl apply --server-side -f sluice.yaml\n"
	return append([]byte(header), data...), nil
}
