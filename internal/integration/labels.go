package integration

// CopyLabels copies the labels keys names from a job (or a group's first
// Pod) to its Workload, as integrations.labelKeysToCopy asks. A label the
// Workload already has is sluice's own (job UID, pod group, standalone)
// and is never overwritten: a job must not be able to pass for another by
// naming one of them.
func CopyLabels(workloadLabels, jobLabels map[string]string, keys []string) {
	for _, key := range keys {
		v, ok := jobLabels[key]
		if _, own := workloadLabels[key]; !ok || own {
			continue
		}
		workloadLabels[key] = v
	}
}
