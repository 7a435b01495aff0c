package release

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configapi "github.com/sluicehq/sluice/apis/config/v1beta2"
)

// schema is a JSON Schema (draft 7, what Helm checks values against).
type schema map[string]any

// ConfigurationSchema is the JSON Schema of the manager's configuration
// file, from its Go types: every field by its JSON name and type, and no
// other field, so that a misspelt key fails `helm install` instead of
// reaching the manager.
func ConfigurationSchema() schema {
	return typeSchema(reflect.TypeFor[configapi.Configuration]())
}

var (
	durationType = reflect.TypeFor[metav1.Duration]()
	quantityType = reflect.TypeFor[resource.Quantity]()
	timeType     = reflect.TypeFor[metav1.Time]()
	stdDuration  = reflect.TypeFor[time.Duration]()
	marshaler    = reflect.TypeFor[json.Marshaler]()
)

func typeSchema(t reflect.Type) schema {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case durationType:
		return schema{"type": "string", "description": "a duration, such as 30s or 5m"}
	case quantityType:
		return schema{"type": []string{"string", "integer", "number"}, "description": "a quantity, such as 500m or 2Gi"}
	case timeType:
		return schema{"type": "string"}
	case stdDuration:
		return schema{"type": "integer", "description": "nanoseconds"}
	}
	if reflect.PointerTo(t).Implements(marshaler) || t.Implements(marshaler) {
		return schema{} // its own encoding: anything
	}
	switch t.Kind() {
	case reflect.Struct:
		props := schema{}
		addFields(props, t)
		return schema{"type": "object", "properties": props, "additionalProperties": false}
	case reflect.Map:
		return schema{"type": "object", "additionalProperties": typeSchema(t.Elem())}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return schema{"type": "string"}
		}
		return schema{"type": "array", "items": typeSchema(t.Elem())}
	case reflect.String:
		return schema{"type": "string"}
	case reflect.Bool:
		return schema{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return schema{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return schema{"type": "number"}
	default:
		return schema{}
	}
}

// addFields adds t's JSON fields to props, those of inlined structs too.
func addFields(props schema, t reflect.Type) {
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" && (f.Anonymous || strings.Contains(opts, "inline")) {
			inner := f.Type
			for inner.Kind() == reflect.Pointer {
				inner = inner.Elem()
			}
			addFields(props, inner)
			continue
		}
		if name == "" {
			name = f.Name
		}
		props[name] = typeSchema(f.Type)
	}
}

// ValuesSchema is the chart's values.schema.json: the values chart
// templates read, each typed, and managerConfig as the configuration file.
func ValuesSchema() ([]byte, error) {
	str := schema{"type": "string"}
	boolean := schema{"type": "boolean"}
	object := schema{"type": "object"}
	list := schema{"type": "array"}
	obj := func(props schema) schema {
		return schema{"type": "object", "properties": props, "additionalProperties": false}
	}
	values := obj(schema{
		"image": obj(schema{
			"repository": schema{"type": "string", "minLength": 1},
			"tag":        str,
			"digest":     schema{"type": "string", "pattern": "^(sha256:[a-f0-9]{64})?$"},
			"pullPolicy": schema{"enum": []string{"Always", "IfNotPresent", "Never"}},
		}),
		"imagePullSecrets": list,
		"replicas":         schema{"type": "integer", "minimum": 1},
		"resources":        object,
		"managerConfig":    ConfigurationSchema(),
		"extraArgs":        schema{"type": "array", "items": str},
		"metrics": obj(schema{
			"service":        boolean,
			"serviceMonitor": obj(schema{"enable": boolean, "interval": str, "labels": schema{"type": "object", "additionalProperties": str}}),
		}),
		"certManager":               obj(schema{"enable": boolean, "issuerRef": object}),
		"priorityClassName":         str,
		"nodeSelector":              schema{"type": "object", "additionalProperties": str},
		"tolerations":               list,
		"affinity":                  object,
		"topologySpreadConstraints": list,
		"podDisruptionBudget":       obj(schema{"enable": boolean, "minAvailable": schema{"type": []string{"integer", "string"}}}),
		"dashboard":                 obj(schema{"enable": boolean, "resources": object}),
		"podAnnotations":            schema{"type": "object", "additionalProperties": str},
		"podLabels":                 schema{"type": "object", "additionalProperties": str},
	})
	values["$schema"] = "http://json-schema.org/draft-07/schema#"
	values["title"] = "sluice chart values"
	data, err := json.MarshalIndent(values, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("the values schema: %w", err)
	}
	return append(data, '\n'), nil
}
