// Package config loads the manager's configuration file: Kueue's
// Configuration in either of its versions (config.kueue.x-k8s.io/v1beta2 or
// v1beta1), converted to v1beta2, defaulted and validated, and says which
// fields sluice does not act on yet. It must not start anything;
// internal/manager turns a loaded Configuration into a running manager.
package config

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/sluicehq/sluice/apis/config/v1beta1"
	"github.com/sluicehq/sluice/apis/config/v1beta2"
)

// serviceAccountNamespace is where a pod finds its namespace; the manager
// defaults its namespace to it, as Kueue does.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// File is a loaded configuration.
type File struct {
	// Config is the configuration to run with: v1beta2, defaulted, valid.
	Config *v1beta2.Configuration
	// Written is the configuration as the file said it (converted to
	// v1beta2), before defaults: what the file sets.
	Written *v1beta2.Configuration
	// Dropped are v1beta1 fields with no place in v1beta2.
	Dropped []string
}

// Load reads a configuration file strictly (an unknown or duplicate field is
// an error naming it), converts, defaults and validates it.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading configuration: %w", err)
	}
	f, err := Decode(data, podNamespace())
	if err != nil {
		return nil, fmt.Errorf("configuration %s: %w", path, err)
	}
	return f, nil
}

// Default is the configuration used when no file is given.
func Default() *File {
	written := &v1beta2.Configuration{}
	written.APIVersion, written.Kind = v1beta2.Group+"/"+v1beta2.Version, v1beta2.Kind
	cfg := written.DeepCopy()
	if ns := podNamespace(); ns != "" {
		cfg.Namespace = &ns
	}
	v1beta2.SetDefaults(cfg)
	return &File{Config: cfg, Written: written}
}

// Decode parses a configuration document of either version. namespace, if
// not empty, is the default of the manager's namespace (the pod's).
func Decode(data []byte, namespace string) (*File, error) {
	jsonData, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	var header struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(jsonData, &header); err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	if err := validateTypeMeta(header.APIVersion, header.Kind); err != nil {
		return nil, err
	}
	f := &File{}
	wfprOff := false
	if header.APIVersion == v1beta2.Group+"/"+v1beta1.Version {
		old := &v1beta1.Configuration{}
		if err := strictUnmarshal(jsonData, old); err != nil {
			return nil, err
		}
		conv := v1beta1.ConvertToV1beta2(old)
		f.Written, f.Dropped, wfprOff = conv.Config, conv.Dropped, conv.WaitForPodsReadyOff
	} else {
		f.Written = &v1beta2.Configuration{}
		if err := strictUnmarshal(jsonData, f.Written); err != nil {
			return nil, err
		}
	}
	cfg := f.Written.DeepCopy()
	if cfg.Namespace == nil && namespace != "" {
		cfg.Namespace = &namespace
	}
	v1beta2.SetDefaults(cfg)
	if wfprOff {
		cfg.WaitForPodsReady = nil
	}
	errs := v1beta2.Validate(cfg)
	errs = append(errs, refused(cfg)...)
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	f.Config = cfg
	return f, nil
}

func strictUnmarshal(jsonData []byte, into any) error {
	strictErrs, err := kjson.UnmarshalStrict(jsonData, into)
	if err != nil {
		return fmt.Errorf("decoding: %w", err)
	}
	if len(strictErrs) > 0 {
		return fmt.Errorf("decoding: %w", errors.Join(strictErrs...))
	}
	return nil
}

func validateTypeMeta(apiVersion, kind string) error {
	versions := []string{v1beta2.Group + "/" + v1beta2.Version, v1beta2.Group + "/" + v1beta1.Version}
	var errs field.ErrorList
	if apiVersion != versions[0] && apiVersion != versions[1] {
		errs = append(errs, field.NotSupported(field.NewPath("apiVersion"), apiVersion, versions))
	}
	if kind != v1beta2.Kind {
		errs = append(errs, field.NotSupported(field.NewPath("kind"), kind, []string{v1beta2.Kind}))
	}
	return errs.ToAggregate()
}

// podNamespace is the namespace of the pod the manager runs in, or "".
func podNamespace() string {
	data, err := os.ReadFile(serviceAccountNamespace)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}
