// Package config holds the generated manifests (CRDs, webhook configurations)
// and the sample queues, embedded so that `sluice dev` and the tests install
// exactly what `make generate` produced. It parses; it never talks to a
// cluster.
package config

import (
	"bufio"
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/sluicehq/sluice/apis/scheme"
)

//go:embed crd/bases/*.yaml webhook/manifests.yaml samples/*.yaml rbac/user_roles.yaml
var files embed.FS

// Names the kustomize overlay gives the generated webhook configurations;
// embedded copies get them too.
const (
	ValidatingWebhookConfigurationName = "sluice-validating-webhook-configuration"
	MutatingWebhookConfigurationName   = "sluice-mutating-webhook-configuration"
)

// CRDs returns the CustomResourceDefinitions of the kueue.x-k8s.io API.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	paths, err := fs.Glob(files, "crd/bases/*.yaml")
	if err != nil {
		return nil, err
	}
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(paths))
	for _, p := range paths {
		data, err := files.ReadFile(p)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return nil, fmt.Errorf("parsing %s: %w", p, err)
		}
		crds = append(crds, crd)
	}
	return crds, nil
}

// ValidatingWebhooks returns the validating webhook configuration, named as
// deployed.
func ValidatingWebhooks() ([]*admissionv1.ValidatingWebhookConfiguration, error) {
	return webhookConfigurations("ValidatingWebhookConfiguration", ValidatingWebhookConfigurationName,
		func(o *admissionv1.ValidatingWebhookConfiguration) *metav1.ObjectMeta { return &o.ObjectMeta })
}

// MutatingWebhooks returns the mutating webhook configuration, named as
// deployed.
func MutatingWebhooks() ([]*admissionv1.MutatingWebhookConfiguration, error) {
	return webhookConfigurations("MutatingWebhookConfiguration", MutatingWebhookConfigurationName,
		func(o *admissionv1.MutatingWebhookConfiguration) *metav1.ObjectMeta { return &o.ObjectMeta })
}

func webhookConfigurations[T any](kind, name string, meta func(*T) *metav1.ObjectMeta) ([]*T, error) {
	docs, err := documents("webhook/manifests.yaml")
	if err != nil {
		return nil, err
	}
	var out []*T
	for _, doc := range docs {
		probe := struct{ Kind string }{}
		if err := yaml.Unmarshal(doc, &probe); err != nil {
			return nil, fmt.Errorf("parsing webhook/manifests.yaml: %w", err)
		}
		if probe.Kind != kind {
			continue
		}
		obj := new(T)
		if err := yaml.UnmarshalStrict(doc, obj); err != nil {
			return nil, fmt.Errorf("parsing webhook/manifests.yaml: %w", err)
		}
		meta(obj).Name = name
		out = append(out, obj)
	}
	return out, nil
}

// ReleaseNamePrefix is the prefix config/default gives every object it
// installs by name (namePrefix).
const ReleaseNamePrefix = "sluice-"

// UserRoles returns the ClusterRoles for the people who use queues
// (rbac/user_roles.yaml), named as the release installs them: the viewer
// and editor roles of the namespaced kinds aggregate into the built-in
// view, edit and admin roles by their labels.
func UserRoles() ([]*rbacv1.ClusterRole, error) {
	docs, err := documents("rbac/user_roles.yaml")
	if err != nil {
		return nil, err
	}
	roles := make([]*rbacv1.ClusterRole, 0, len(docs))
	for _, doc := range docs {
		role := &rbacv1.ClusterRole{}
		if err := yaml.UnmarshalStrict(doc, role); err != nil {
			return nil, fmt.Errorf("parsing rbac/user_roles.yaml: %w", err)
		}
		if role.Kind != "ClusterRole" {
			return nil, fmt.Errorf("rbac/user_roles.yaml: a %s (%s), want only ClusterRoles", role.Kind, role.Name)
		}
		role.Name = ReleaseNamePrefix + role.Name
		roles = append(roles, role)
	}
	return roles, nil
}

// SampleQueues returns the sample ResourceFlavor, ClusterQueue and LocalQueue.
func SampleQueues() ([]client.Object, error) {
	docs, err := documents("samples/queues.yaml")
	if err != nil {
		return nil, err
	}
	decoder := serializer.NewCodecFactory(scheme.Scheme).UniversalDeserializer()
	objs := make([]client.Object, 0, len(docs))
	for _, doc := range docs {
		obj, _, err := decoder.Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("parsing samples/queues.yaml: %w", err)
		}
		objs = append(objs, obj.(client.Object))
	}
	return objs, nil
}

// documents splits a multi-document YAML file.
func documents(path string) ([][]byte, error) {
	data, err := files.ReadFile(path)
	if err != nil {
		return nil, err
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		if len(bytes.TrimSpace(doc)) > 0 && !bytes.Equal(bytes.TrimSpace(doc), []byte("---")) {
			docs = append(docs, doc)
		}
	}
}
