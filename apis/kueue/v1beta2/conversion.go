package v1beta2

// Every kind's v1beta2 is the hub of conversion (and the storage version):
// kueue.x-k8s.io/v1beta1 converts to and from it.

func (*AdmissionCheck) Hub()            {}
func (*ClusterQueue) Hub()              {}
func (*Cohort) Hub()                    {}
func (*LocalQueue) Hub()                {}
func (*MultiKueueCluster) Hub()         {}
func (*MultiKueueConfig) Hub()          {}
func (*ProvisioningRequestConfig) Hub() {}
func (*ResourceFlavor) Hub()            {}
func (*Topology) Hub()                  {}
func (*Workload) Hub()                  {}
func (*WorkloadPriorityClass) Hub()     {}
