package apply

import (
	"encoding/json"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// withCounts is a status merge patch that always carries the queue's
// counts. A merge patch holds only what changed, and a queue created with
// an empty status whose counts stay zero would otherwise never have them
// stored: kubectl would show blanks where Kueue shows 0.
type withCounts struct{ client.Patch }

// Data is the inner patch with the object's counts set in its status.
func (p withCounts) Data(obj client.Object) ([]byte, error) {
	data, err := p.Patch.Data(obj)
	if err != nil {
		return nil, err
	}
	var current struct {
		Status map[string]json.RawMessage `json:"status"`
	}
	whole, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encoding %s for its status patch: %w", obj.GetName(), err)
	}
	if err := json.Unmarshal(whole, &current); err != nil {
		return nil, fmt.Errorf("decoding %s for its status patch: %w", obj.GetName(), err)
	}
	patch := map[string]json.RawMessage{}
	if err := json.Unmarshal(data, &patch); err != nil {
		return nil, fmt.Errorf("decoding the status patch of %s: %w", obj.GetName(), err)
	}
	status := map[string]json.RawMessage{}
	if raw, ok := patch["status"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &status); err != nil {
			return nil, fmt.Errorf("decoding the status patch of %s: %w", obj.GetName(), err)
		}
	}
	added := false
	// The counts a queue always shows, zero included: kubectl's columns
	// and users' tools read them as Kueue writes them.
	for _, field := range []string{"pendingWorkloads", "reservingWorkloads", "admittedWorkloads"} {
		if v, ok := current.Status[field]; ok {
			if _, patched := status[field]; !patched {
				status[field], added = v, true
			}
		}
	}
	if !added {
		return data, nil
	}
	if patch["status"], err = json.Marshal(status); err != nil {
		return nil, err
	}
	return json.Marshal(patch)
}
