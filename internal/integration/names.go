package integration

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// maxNameLength is the longest object name the API server takes.
const maxNameLength = 253

// WorkloadName is the name of the Workload of a job, as the contract says:
// "<lowercase kind>-<job name>-<first 5 hex chars of a hash of name, UID and
// GVK>", with the job name cut so that the whole fits 253 characters. The
// hash keeps names of different jobs (or the same name recreated) apart.
func WorkloadName(gvk schema.GroupVersionKind, name string, uid types.UID) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{name, string(uid), gvk.Group, gvk.Version, gvk.Kind}, "/")))
	suffix := "-" + hex.EncodeToString(sum[:])[:5]
	prefix := strings.ToLower(gvk.Kind) + "-" + name
	if room := maxNameLength - len(suffix); len(prefix) > room {
		prefix = strings.TrimRight(prefix[:room], "-.")
	}
	return prefix + suffix
}

// maxLabelValue is the longest label value the API server takes.
const maxLabelValue = 63

// FitLabelValue is value when it fits a label value; otherwise value cut,
// with "-" and 5 hex characters of a hash of hashOf, to fit.
func FitLabelValue(value, hashOf string) string {
	if len(value) <= maxLabelValue {
		return value
	}
	sum := sha256.Sum256([]byte(hashOf))
	return value[:maxLabelValue-6] + "-" + hex.EncodeToString(sum[:])[:5]
}
