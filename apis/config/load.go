package v1beta2

import (
	"errors"
	"fmt"
	"os"

	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Load reads a configuration file strictly (an unknown or duplicate field is an
// error naming it), applies defaults and validates the result.
func Load(path string) (*Configuration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading configuration: %w", err)
	}
	cfg, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("configuration %s: %w", path, err)
	}
	return cfg, nil
}

// Decode parses, defaults and validates a configuration document.
func Decode(data []byte) (*Configuration, error) {
	jsonData, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	cfg := &Configuration{}
	strictErrs, err := kjson.UnmarshalStrict(jsonData, cfg)
	if err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	if len(strictErrs) > 0 {
		return nil, fmt.Errorf("decoding: %w", errors.Join(strictErrs...))
	}
	if err := ValidateTypeMeta(cfg); err != nil {
		return nil, err
	}
	SetDefaults(cfg)
	if errs := Validate(cfg); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return cfg, nil
}

// Default returns the configuration used when no file is given.
func Default() *Configuration {
	cfg := &Configuration{}
	cfg.APIVersion = Group + "/" + Version
	cfg.Kind = Kind
	SetDefaults(cfg)
	return cfg
}
