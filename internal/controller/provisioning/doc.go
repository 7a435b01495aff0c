// Package provisioning is the built-in admission check controller
// kueue.x-k8s.io/provisioning-request: for each reserved workload whose
// ClusterQueue asks such a check it creates an autoscaling.x-k8s.io/v1
// ProvisioningRequest (and a PodTemplate per provisioned pod set), maps
// the request's conditions to the check's state, and hands the pods the
// annotations that consume the capacity. It marks its AdmissionChecks
// Active when their ProvisioningRequestConfig exists and the cluster serves
// ProvisioningRequests. It writes only the check entries of the workloads
// it owns, and its requests and templates; admission itself stays with
// internal/controller and internal/apply.
package provisioning
